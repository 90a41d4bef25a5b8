// sandbox_exec: runs one command through the sandbox library, like `codex sandbox`, for manual
// checks and the Codex comparison script. Not a product tool (codexctl sandbox is).
//   sandbox_exec [--backend=auto|bwrap|landlock] [--mode=M] [--network] [--writable=DIR]...
//                [--deny-read=P]... [--mask=P]... [--print-plan] -- CMD [ARGS...]
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "platform/sandbox/format.h"
#include "platform/backends/manager_factory.h"
#include "platform/sandbox/sandbox.h"

extern char** environ;

namespace sb = codexd::sandbox;

int main(int argc, char** argv) {
  sb::SandboxManagerOptions options;
  sb::SandboxPolicy policy;
  bool print_plan = false;
  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* prefix) { return arg.substr(std::strlen(prefix)); };
    if (arg == "--") {
      ++i;
      break;
    } else if (arg.rfind("--backend=", 0) == 0) {
      auto pref = sb::parse_backend_preference(value("--backend="));
      if (!pref) return 2;
      options.preference = *pref;
    } else if (arg.rfind("--mode=", 0) == 0) {
      auto mode = sb::parse_sandbox_mode(value("--mode="));
      if (!mode) return 2;
      policy.mode = *mode;
    } else if (arg == "--network") {
      policy.network = sb::NetworkMode::kProxy;
    } else if (arg.rfind("--writable=", 0) == 0) {
      policy.writable_roots.push_back(value("--writable="));
    } else if (arg.rfind("--deny-read=", 0) == 0) {
      policy.denied_read.push_back(value("--deny-read="));
    } else if (arg == "--print-plan") {
      print_plan = true;
    } else {
      std::fprintf(stderr, "sandbox_exec: unknown option %s\n", arg.c_str());
      return 2;
    }
  }
  if (i >= argc) {
    std::fprintf(stderr, "sandbox_exec: no command\n");
    return 2;
  }
  options.helper_path = CODEXD_TEST_HELPER_PATH;
  std::unique_ptr<sb::SandboxManager> manager = sb::create_sandbox_manager(options);
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd) == nullptr) return 2;
  sb::ResolveContext context;
  context.cwd = cwd;
  if (const char* tmpdir = std::getenv("TMPDIR")) context.tmpdir_env = tmpdir;
  codexd::Result<sb::SandboxSpec> spec = sb::resolve_sandbox_spec(policy, context);
  if (!spec.ok()) {
    std::fprintf(stderr, "sandbox_exec: %s\n", spec.status().to_string().c_str());
    return 2;
  }
  sb::LaunchRequest request;
  request.argv.assign(argv + i, argv + argc);
  request.cwd = cwd;
  for (char** e = environ; *e != nullptr; ++e) request.env.push_back(*e);
  codexd::Result<sb::LaunchPlan> plan = manager->plan(*spec, request);
  if (!plan.ok()) {
    std::fprintf(stderr, "sandbox_exec: %s\n", plan.status().to_string().c_str());
    return 125;
  }
  if (print_plan) {
    std::printf("%s\n%s\n%s", sb::format_capability_report(manager->capabilities()).c_str(),
                sb::format_sandbox_spec(*spec).c_str(), sb::format_launch_plan(*plan).c_str());
    return 0;
  }
  std::vector<char*> args;
  for (std::string& a : plan->argv) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<char*> env;
  for (std::string& e : plan->env) env.push_back(e.data());
  env.push_back(nullptr);
  // The compiled seccomp programs where the helper expects them (dup2 clears close-on-exec).
  if (plan->seccomp_program && ::dup2(plan->seccomp_program->get(), plan->seccomp_fd) < 0) {
    std::perror("sandbox_exec: dup2");
    return 125;
  }
  ::setsid();
  ::execve(args[0], args.data(), env.data());
  std::perror("sandbox_exec: execve");
  return 127;
}
