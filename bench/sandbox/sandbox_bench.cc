// sandbox_bench [RUNS]: per-run cost of `/bin/true`, medians over RUNS (default 40), measured
// round-robin in one process so the ratios share the same machine state:
//   unsandboxed   posix_spawn + wait
//   bwrap direct  bwrap with exactly our profile, but /bin/true instead of our helper
//   codexd bwrap  plan() + spawn + wait through our bwrap backend (bwrap + helper + filter)
//   codexd landlock  plan() + spawn + wait through the Landlock backend (helper only)
// Prints medians and ratios; asserts nothing.
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_csv.h"
#include "platform/backends/manager_factory.h"
#include "platform/sandbox/sandbox.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace sb = codexd::sandbox;

// `plan`: a sandbox plan whose compiled seccomp programs the child gets at plan->seccomp_fd.
int spawn_and_wait(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                   const std::string& cwd, const sb::LaunchPlan* plan = nullptr) {
  std::vector<char*> a;
  for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  std::vector<char*> e;
  for (const std::string& s : env) e.push_back(const_cast<char*>(s.c_str()));
  e.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  if (plan != nullptr && plan->seccomp_program) {
    posix_spawn_file_actions_adddup2(&actions, plan->seccomp_program->get(), plan->seccomp_fd);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, a[0], &actions, &attr, a.data(), e.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Subject {
  std::string name;
  std::function<int()> run;
  std::vector<double> ms;
};

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::max(1, atoi(argv[1])) : 40;
  char templ[] = "/var/tmp/codexd-sandbox-bench-XXXXXX";
  if (mkdtemp(templ) == nullptr) return 1;
  std::string ws = templ;
  const std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
  const std::vector<std::string> command = {"/bin/true"};

  sb::SandboxPolicy policy;  // workspace-write, network off: the common case
  sb::ResolveContext context;
  context.cwd = ws;
  codexd::Result<sb::SandboxSpec> spec = sb::resolve_sandbox_spec(policy, context);
  if (!spec.ok()) {
    std::fprintf(stderr, "resolve: %s\n", spec.status().to_string().c_str());
    return 1;
  }

  std::vector<Subject> subjects;
  subjects.push_back({"unsandboxed posix_spawn", [&] { return spawn_and_wait(command, env, ws); }, {}});

  sb::SandboxManagerOptions options;
  options.helper_path = CODEXD_BENCH_HELPER_PATH;
  options.preference = sb::BackendPreference::kBwrap;
  auto bwrap_manager = sb::create_sandbox_manager(options);
  options.preference = sb::BackendPreference::kLandlock;
  auto landlock_manager = sb::create_sandbox_manager(options);
  std::printf("%s", "capability probe (bwrap preference):\n");
  std::printf("  chosen=%s probe=%d ms\n", std::string(sb::to_string(bwrap_manager->capabilities().chosen)).c_str(),
              bwrap_manager->capabilities().probe_millis);

  if (bwrap_manager->capabilities().chosen == sb::Backend::kLinuxBwrap) {
    codexd::Result<sb::LaunchPlan> plan = bwrap_manager->plan(*spec, {command, ws, env});
    if (!plan.ok()) return 1;
    // The same bwrap profile with /bin/true in place of our helper.
    std::vector<std::string> direct(plan->argv.begin(),
                                    std::find(plan->argv.begin(), plan->argv.end(), "--") + 1);
    direct.push_back("/bin/true");
    std::vector<std::string> plan_env = plan->env;
    subjects.push_back({"bwrap direct, same profile", [=] { return spawn_and_wait(direct, plan_env, ws); }, {}});
    // Codex 0.169's argv for workspace-write with the network off (reference: codex-runtime.md
    // 4.2), the command in place of its helper.
    const std::vector<std::string> codex_argv = {"/usr/bin/bwrap", "--new-session", "--die-with-parent", "--ro-bind", "/", "/",
                                                 "--dev", "/dev", "--bind", ws, ws, "--unshare-user", "--unshare-pid",
                                                 "--unshare-net", "--proc", "/proc", "--", "/bin/true"};
    subjects.push_back({"bwrap direct, Codex's argv", [=] { return spawn_and_wait(codex_argv, env, ws); }, {}});
    sb::LaunchPlan reused = *plan;
    subjects.push_back({"codexd bwrap (spawn only)", [=] { return spawn_and_wait(reused.argv, reused.env, ws, &reused); }, {}});
    subjects.push_back({"codexd bwrap (plan+spawn)", [&] {
                          codexd::Result<sb::LaunchPlan> p = bwrap_manager->plan(*spec, {command, ws, env});
                          return p.ok() ? spawn_and_wait(p->argv, p->env, p->cwd, &*p) : -1;
                        }, {}});
  } else {
    std::printf("bwrap backend unusable here; its rows are skipped\n");
  }
  if (landlock_manager->capabilities().chosen == sb::Backend::kLinuxLandlock) {
    subjects.push_back({"codexd landlock (plan+spawn)", [&] {
                          codexd::Result<sb::LaunchPlan> p = landlock_manager->plan(*spec, {command, ws, env});
                          return p.ok() ? spawn_and_wait(p->argv, p->env, p->cwd, &*p) : -1;
                        }, {}});
  }

  for (Subject& s : subjects) {  // warm-up, and a sanity check that each really runs
    if (s.run() != 0) std::printf("warning: %s did not exit 0\n", s.name.c_str());
  }
  for (int i = 0; i < runs; ++i) {
    for (Subject& s : subjects) {
      Clock::time_point start = Clock::now();
      s.run();
      s.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
  }

  double base = median(subjects.front().ms);
  std::printf("\nper-run cost of /bin/true, median of %d runs:\n", runs);
  for (const Subject& s : subjects) {
    std::printf("  %-30s %8.2f ms   %6.2fx unsandboxed\n", s.name.c_str(), median(s.ms), median(s.ms) / base);
  }
  auto find = [&](const std::string& name) -> const Subject* {
    for (const Subject& s : subjects) {
      if (s.name == name) return &s;
    }
    return nullptr;
  };
  namespace cb = codexd::bench;
  const Subject* same = find("bwrap direct, same profile");
  const Subject* codex = find("bwrap direct, Codex's argv");
  const Subject* cold = find("codexd bwrap (plan+spawn)");
  if (same && cold) {
    std::printf("  codexd bwrap (plan+spawn) / bwrap direct: %6.2fx\n", median(cold->ms) / median(same->ms));
    cb::append_csv_row("sandboxed cold launch (plan+spawn)", median(cold->ms), "ms", "bare bwrap with codexd's profile",
                       median(same->ms), "<=1.0x");
  }
  if (codex && cold) {
    cb::append_csv_row("sandboxed cold launch (plan+spawn) vs Codex", median(cold->ms), "ms", "bare bwrap with Codex's argv",
                       median(codex->ms));
  }
  if (same) cb::append_csv_row("bare bwrap with codexd's profile", median(same->ms), "ms", "posix_spawn", base);
  if (const Subject* landlock = find("codexd landlock (plan+spawn)")) {
    cb::append_csv_row("Landlock launch (plan+spawn)", median(landlock->ms), "ms", "posix_spawn", base);
  }
  std::error_code ec;
  std::filesystem::remove_all(ws, ec);
  return 0;
}
