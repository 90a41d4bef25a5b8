#include "platform/linux/linux_sandbox_manager.h"

#include <unistd.h>

#include "platform/linux/bwrap_invocation.h"
#include "platform/linux/capability_probe.h"
#include "platform/linux/helper_config.h"
#include "platform/linux/landlock_ruleset.h"
#include "platform/linux/loader_env.h"
#include "platform/linux/seccomp_rules.h"
#include "platform/sandbox/path_utils.h"

namespace codexd::sandbox::linux_backend {
namespace {

constexpr const char* kHelperName = "codexd-sandbox-helper";

Status validate_request(const LaunchRequest& request) {
  if (request.argv.empty() || request.argv.front().empty()) return InvalidArgument("empty command");
  for (const std::string& word : request.argv) {
    if (word.find('\0') != std::string::npos) return InvalidArgument("command word holds a NUL byte");
  }
  CODEXD_RETURN_IF_ERROR(validate_absolute_path(request.cwd, "command cwd"));
  return Status::Ok();
}

// The helper must not be replaceable by a sandboxed command: if it (or a directory above
// it) sits inside a writable root, an earlier run could have swapped it.
Status check_helper_outside_writable_roots(const std::string& helper, const SandboxSpec& spec) {
  for (const WritableRoot& root : spec.writable_roots) {
    if (is_same_or_under(helper, root.root)) {
      return Unavailable("sandbox helper " + helper + " lies inside writable root " + root.root +
                         "; a sandboxed command could replace it (install codexd outside the workspace)");
    }
  }
  return Status::Ok();
}

std::vector<std::string> with_markers(std::vector<std::string> env, Backend backend, bool network) {
  env.push_back("CODEXD_SANDBOX=" + std::string(to_string(backend)));
  if (!network) env.push_back("CODEX_SANDBOX_NETWORK_DISABLED=1");
  return env;
}

class LinuxSandboxManager final : public SandboxManager {
 public:
  explicit LinuxSandboxManager(LinuxProbe probe) : probe_(std::move(probe)) {}

  const CapabilityReport& capabilities() const override { return probe_.report; }

  Result<LaunchPlan> plan(const SandboxSpec& spec, const LaunchRequest& request) const override {
    CODEXD_RETURN_IF_ERROR(validate_request(request));
    if (spec.mode == SandboxMode::kDangerFullAccess) return unsandboxed(request);
    switch (probe_.report.chosen) {
      case Backend::kLinuxBwrap: return plan_bwrap(spec, request);
      case Backend::kLinuxLandlock: return plan_landlock(spec, request);
      default: break;
    }
    std::string reason = "no Linux sandbox backend can enforce " + std::string(to_string(spec.mode));
    for (const std::string& warning : probe_.report.warnings) reason += "; " + warning;
    return Unavailable(reason);
  }

 private:
  static LaunchPlan unsandboxed(const LaunchRequest& request) {
    LaunchPlan plan;
    plan.backend = Backend::kNone;
    plan.argv = request.argv;
    plan.env = request.env;
    plan.cwd = request.cwd;
    plan.rules.push_back("danger-full-access: no sandbox");
    return plan;
  }

  HelperConfig helper_config(const SandboxSpec& spec, const LaunchRequest& request,
                             const SplitEnvironment& env, HelperMode mode) const {
    HelperConfig config;
    config.mode = mode;
    config.network = spec.network_access;
    config.deferred_env = env.deferred;
    config.command = request.argv;
    return config;
  }

  Result<LaunchPlan> plan_bwrap(const SandboxSpec& spec, const LaunchRequest& request) const {
    const std::string& helper = probe_.report.helper_path;
    CODEXD_RETURN_IF_ERROR(check_helper_outside_writable_roots(helper, spec));
    SplitEnvironment env = split_loader_environment(request.env);
    HelperConfig config = helper_config(spec, request, env, HelperMode::kBwrap);
    std::vector<std::string> helper_argv = {helper};
    std::vector<std::string> rendered = render_helper_args(config);
    helper_argv.insert(helper_argv.end(), rendered.begin(), rendered.end());

    CODEXD_ASSIGN_OR_RETURN(BwrapInvocation invocation,
                            build_bwrap_invocation(probe_.report.bwrap_path, probe_.features, spec,
                                                   request.cwd, helper_argv, request.tty));
    LaunchPlan plan;
    plan.backend = Backend::kLinuxBwrap;
    plan.argv = std::move(invocation.argv);
    plan.env = with_markers(env.safe, plan.backend, spec.network_access);
    plan.cwd = request.cwd;
    plan.rules = std::move(invocation.rules);
    for (std::string& line : describe_seccomp_rules(config)) plan.rules.push_back(std::move(line));
    if (!env.deferred.empty()) {
      plan.rules.push_back("loader variables applied only after the filter: " +
                           std::to_string(env.deferred.size()));
    }
    return plan;
  }

  Result<LaunchPlan> plan_landlock(const SandboxSpec& spec, const LaunchRequest& request) const {
    const std::string& helper = probe_.report.helper_path;
    CODEXD_RETURN_IF_ERROR(check_helper_outside_writable_roots(helper, spec));
    SplitEnvironment env = split_loader_environment(request.env);
    HelperConfig config = helper_config(spec, request, env, HelperMode::kLandlock);
    // No mount namespace: host socket paths (the daemon's included) stay visible, so Unix
    // sockets cannot be created at all.
    config.block_unix_sockets = true;
    for (const WritableRoot& root : spec.writable_roots) {
      config.writable.push_back(root.root);
      for (const std::string& sub : root.read_only_subpaths) config.read_only.push_back(sub);
    }
    config.unreadable = spec.denied_read;
    config.unreadable.insert(config.unreadable.end(), spec.masked_paths.begin(), spec.masked_paths.end());
    config.writable_files = landlock_writable_devices();

    LaunchPlan plan;
    plan.backend = Backend::kLinuxLandlock;
    plan.argv = {helper};
    std::vector<std::string> rendered = render_helper_args(config);
    plan.argv.insert(plan.argv.end(), rendered.begin(), rendered.end());
    plan.env = with_markers(env.safe, plan.backend, spec.network_access);
    plan.cwd = request.cwd;
    plan.rules = describe_landlock(config, probe_.report.landlock_abi);
    plan.rules.push_back("no mount, pid or network namespace: host processes are visible in /proc, "
                         "/tmp is shared (writable only if it is a writable root)");
    for (std::string& line : describe_seccomp_rules(config)) plan.rules.push_back(std::move(line));
    return plan;
  }

  LinuxProbe probe_;
};

}  // namespace

std::string default_helper_path() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return kHelperName;
  std::string exe(buf, static_cast<size_t>(n));
  return join_path(parent_path(exe), kHelperName);
}

const std::vector<std::string>& landlock_writable_devices() {
  static const std::vector<std::string> kDevices = {"/dev/null", "/dev/zero", "/dev/full"};
  return kDevices;
}

std::unique_ptr<SandboxManager> create_linux_sandbox_manager(const SandboxManagerOptions& options) {
  std::string helper = options.helper_path.empty() ? default_helper_path() : options.helper_path;
  return std::make_unique<LinuxSandboxManager>(probe_linux_sandbox(options, helper));
}

}  // namespace codexd::sandbox::linux_backend
