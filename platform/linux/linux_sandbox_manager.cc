#include "platform/linux/linux_sandbox_manager.h"

#include <unistd.h>

#include "platform/linux/bwrap_invocation.h"
#include "platform/linux/capability_probe.h"
#include "platform/linux/helper_config.h"
#include "platform/linux/landlock_ruleset.h"
#include "platform/linux/loader_env.h"
#include "platform/linux/seccomp_program_cache.h"
#include "platform/linux/seccomp_rules.h"
#include "platform/posix/executable_path.h"
#include "platform/posix/process_image.h"
#include "platform/posix/spawn.h"
#include "platform/sandbox/path_utils.h"
#include "platform/sandbox/proxy_env.h"

namespace codexd::sandbox::linux_backend {
namespace {

constexpr const char* kHelperName = "codexd-sandbox-helper";

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

std::vector<std::string> with_markers(std::vector<std::string> env, Backend backend, NetworkMode network) {
  env.push_back("CODEXD_SANDBOX=" + std::string(to_string(backend)));
  env.push_back("CODEXD_SANDBOX_NETWORK=" + std::string(to_string(network)));
  if (network == NetworkMode::kOff) env.push_back("CODEX_SANDBOX_NETWORK_DISABLED=1");
  // bwrap: the ports are fixed inside the sandbox's own network namespace. Landlock: the
  // helper sets the same variables once it has its ephemeral ports.
  if (network == NetworkMode::kProxy && backend == Backend::kLinuxBwrap) {
    env = with_proxy_environment(std::move(env), kNamespaceProxyPorts);
  }
  return env;
}

// "http_proxy HTTP_PROXY ...": the names proxy_environment sets.
std::string proxy_variable_names() {
  std::string names;
  for (const std::string& e : proxy_environment(kNamespaceProxyPorts)) {
    names += (names.empty() ? "" : " ") + e.substr(0, e.find('='));
  }
  return names;
}

// What the plan says about the network, for dry runs and the audit log.
void describe_network(const SandboxSpec& spec, Backend backend, std::vector<std::string>* rules) {
  switch (spec.network) {
    case NetworkMode::kOff: return;  // the namespace and seccomp lines say it
    case NetworkMode::kHost:
      rules->push_back("network: host (DANGEROUS): the host's network namespace; every loopback service, "
                       "abstract Unix socket and address the host can reach is reachable");
      return;
    case NetworkMode::kProxy:
      rules->push_back(backend == Backend::kLinuxBwrap
                           ? "network: proxy: own network namespace with only lo; HTTP proxy 127.0.0.1:3128 and "
                             "SOCKS5 127.0.0.1:1080, accepted by codexd's filtering proxy (listening sockets "
                             "handed over on descriptor 3 before the command starts)"
                           : "network: proxy: host network namespace; TCP connect only to two ephemeral proxy "
                             "ports on 127.0.0.1 (Landlock), no UDP, no Unix or netlink sockets (seccomp)");
      rules->push_back("network: proxy environment: " + proxy_variable_names());
      return;
  }
}

// What both Linux plans share: the environment split at the loader variables and the
// helper's configuration for the command.
struct HelperLaunch {
  SplitEnvironment env;
  HelperConfig config;
};

// The writable roots and their read-only subpaths as the command sees them: the Landlock
// grants and the metadata keeper's scope. The private /tmp is `private_tmp_path` there.
void add_writable_paths(const SandboxSpec& spec, const std::string& private_tmp_path, HelperConfig* config) {
  for (const WritableRoot& root : spec.writable_roots) {
    config->writable.push_back(root.root);
    for (const std::string& sub : root.read_only_subpaths) config->read_only.push_back(sub);
  }
  if (spec.private_tmp) config->writable.push_back(private_tmp_path);
}

Result<HelperLaunch> prepare_helper(const std::string& helper, const SandboxSpec& spec,
                                    const LaunchRequest& request, HelperMode mode, bool user_notification) {
  CODEXD_RETURN_IF_ERROR(check_helper_outside_writable_roots(helper, spec));
  HelperLaunch launch;
  launch.env = split_loader_environment(request.env);
  launch.config.mode = mode;
  launch.config.network = spec.network;
  launch.config.supervise_exec = spec.supervise_exec;
  launch.config.exec_audit_only = spec.supervise_exec && spec.exec_audit_only;
  // The keeper's listener is a seccomp user notification, the kernel feature exec supervision
  // probes for (the sandbox manager refuses supervision without it); the keeper relays execs.
  launch.config.metadata_keeper = user_notification;
  add_writable_paths(spec, mode == HelperMode::kBwrap ? "/tmp" : spec.private_tmp.value_or(""), &launch.config);
  if (spec.network == NetworkMode::kProxy || spec.supervise_exec) launch.config.channel_fd = posix::kPassedFdNumber;
  launch.config.deferred_env = launch.env.deferred;
  launch.config.command = request.argv;
  return launch;
}

std::vector<std::string> helper_argv(const std::string& helper, const HelperConfig& config) {
  std::vector<std::string> argv = {helper};
  std::vector<std::string> rendered = render_helper_args(config);
  argv.insert(argv.end(), rendered.begin(), rendered.end());
  return argv;
}

LaunchPlan confined_plan(Backend backend, std::vector<std::string> argv, const HelperLaunch& launch,
                         const SandboxSpec& spec, const LaunchRequest& request) {
  LaunchPlan plan;
  plan.backend = backend;
  plan.argv = std::move(argv);
  plan.env = with_markers(launch.env.safe, backend, spec.network);
  // The one $TMPDIR: /tmp where bwrap mounts the private directory there, its host path under
  // Landlock (which cannot remount /tmp).
  if (spec.private_tmp) {
    plan.env = with_private_tmpdir(std::move(plan.env), backend == Backend::kLinuxBwrap ? "/tmp" : *spec.private_tmp);
  }
  plan.cwd = request.cwd;
  plan.channel_fd = launch.config.channel_fd;
  plan.supervises_exec = launch.config.supervise_exec;
  plan.console_fd = launch.config.console_fd;
  plan.seccomp_fd = launch.config.seccomp_fd;
  return plan;
}

class LinuxSandboxManager final : public SandboxManager {
 public:
  explicit LinuxSandboxManager(LinuxProbe probe) : probe_(std::move(probe)) {}

  const CapabilityReport& capabilities() const override { return probe_.report; }
  const LinuxCapabilities& linux_capabilities() const { return probe_.caps; }

 protected:
  Result<LaunchPlan> plan_confined(const SandboxSpec& spec, const LaunchRequest& request) const override {
    if (probe_.report.chosen == Backend::kLinuxLandlock) return plan_landlock(spec, request);
    return plan_bwrap(spec, request);
  }

  Result<std::string> resolve_unconfined_executable(const LaunchRequest& request) const override {
    return posix::resolve_executable(request.argv.front(), request.env, request.cwd);
  }

 private:
  Result<LaunchPlan> plan_bwrap(const SandboxSpec& spec, const LaunchRequest& request) const {
    const std::string& helper = probe_.report.helper_path;
    CODEXD_ASSIGN_OR_RETURN(HelperLaunch launch,
                            prepare_helper(helper, spec, request, HelperMode::kBwrap, probe_.caps.exec_supervision));
    // The helper stays as the sandbox's init: bwrap dies on a signal and pid 1 ignores what it
    // has no handler for, so without it Ctrl-C and Cancel never reached the command.
    launch.config.init = true;
    // A terminal of its own in bwrap's fresh /dev/pts (the host's would only appear as
    // /dev/console there): `tty` says /dev/pts/0, as under `docker exec -t`.
    if (request.tty) launch.config.console_fd = posix::kConsoleFdNumber;
    CODEXD_ASSIGN_OR_RETURN(std::shared_ptr<const UniqueFd> program, compiled_program(&launch.config));
    CODEXD_ASSIGN_OR_RETURN(BwrapInvocation invocation,
                            build_bwrap_invocation(probe_.caps.bwrap_path, probe_.features, spec, request.cwd,
                                                   helper_argv(helper, launch.config), request.tty));
    LaunchPlan plan = confined_plan(Backend::kLinuxBwrap, std::move(invocation.argv), launch, spec, request);
    plan.seccomp_program = std::move(program);
    plan.rules = std::move(invocation.rules);
    describe_network(spec, Backend::kLinuxBwrap, &plan.rules);
    plan.forwards_signals = true;
    plan.rules.push_back("signals: bwrap ignores HUP INT QUIT USR1 USR2 TERM ALRM; the helper stays as pid 1, "
                         "forwards them to the command's process group and exits with its status");
    if (request.tty) {
      plan.rules.push_back("terminal: the helper opens a PTY in the sandbox's own /dev/pts and sends its master to the "
                           "session's keeper over descriptor 4; the command's terminal is /dev/pts/N inside (without "
                           "a keeper to take it, the host terminal stays, bound on /dev/console)");
    }
    for (std::string& line : describe_seccomp_rules(launch.config)) plan.rules.push_back(std::move(line));
    if (!launch.env.deferred.empty()) {
      plan.rules.push_back("loader variables applied only after the filter: " +
                           std::to_string(launch.env.deferred.size()));
    }
    return plan;
  }

  Result<LaunchPlan> plan_landlock(const SandboxSpec& spec, const LaunchRequest& request) const {
    if (spec.network == NetworkMode::kProxy && probe_.caps.landlock_abi < 4) {
      return Unavailable("network mode proxy needs bwrap or Landlock ABI 4 (TCP rules); this kernel has ABI " +
                         std::to_string(probe_.caps.landlock_abi));
    }
    const std::string& helper = probe_.report.helper_path;
    CODEXD_ASSIGN_OR_RETURN(HelperLaunch launch,
                            prepare_helper(helper, spec, request, HelperMode::kLandlock, probe_.caps.exec_supervision));
    HelperConfig& config = launch.config;
    // No mount namespace: host socket paths (the daemon's included) stay visible, so Unix
    // sockets cannot be created at all.
    config.block_unix_sockets = true;
    config.unreadable = spec.denied_read;
    config.unreadable.insert(config.unreadable.end(), spec.masked_paths.begin(), spec.masked_paths.end());
    config.writable_files = landlock_writable_devices();
    CODEXD_ASSIGN_OR_RETURN(std::shared_ptr<const UniqueFd> program, compiled_program(&config));

    LaunchPlan plan = confined_plan(Backend::kLinuxLandlock, helper_argv(helper, config), launch, spec, request);
    plan.seccomp_program = std::move(program);
    plan.rules = describe_landlock(config, probe_.caps.landlock_abi);
    describe_network(spec, Backend::kLinuxLandlock, &plan.rules);
    plan.rules.push_back(spec.private_tmp
                             ? "no mount, pid or network namespace: host processes are visible in /proc; host /tmp "
                               "stays visible read-only, the private /tmp is " + *spec.private_tmp + " ($TMPDIR)"
                             : "no mount, pid or network namespace: host processes are visible in /proc, "
                               "/tmp is shared (writable only if it is a writable root)");
    for (std::string& line : describe_seccomp_rules(config)) plan.rules.push_back(std::move(line));
    return plan;
  }

  // The seccomp programs for `config`'s rules, compiled once (every later plan with the same
  // rules shares them); the helper is told where it gets them. Call after every field that
  // decides the rules is set.
  Result<std::shared_ptr<const UniqueFd>> compiled_program(HelperConfig* config) const {
    CODEXD_ASSIGN_OR_RETURN(std::shared_ptr<const UniqueFd> program, programs_.get(*config));
    config->seccomp_fd = posix::kSeccompFdNumber;
    return program;
  }

  LinuxProbe probe_;
  SeccompProgramCache programs_;
};

}  // namespace

std::string default_helper_path() { return posix::companion_program_path(kHelperName); }

const std::vector<std::string>& landlock_writable_devices() {
  static const std::vector<std::string> kDevices = {"/dev/null", "/dev/zero", "/dev/full"};
  return kDevices;
}

std::unique_ptr<SandboxManager> create_linux_sandbox_manager(const SandboxManagerOptions& options,
                                                             const LinuxSandboxOptions& linux_options) {
  std::string helper = options.helper_path.empty() ? default_helper_path() : options.helper_path;
  return std::make_unique<LinuxSandboxManager>(probe_linux_sandbox(options, linux_options, helper));
}

const LinuxCapabilities* linux_capabilities(const SandboxManager& manager) {
  const auto* linux_manager = dynamic_cast<const LinuxSandboxManager*>(&manager);
  return linux_manager != nullptr ? &linux_manager->linux_capabilities() : nullptr;
}

}  // namespace codexd::sandbox::linux_backend
