#include "platform/linux/capability_probe.h"

#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "platform/linux/bounded_run.h"
#include "platform/linux/landlock_sys.h"
#include "platform/linux/trusted_executable.h"

namespace codexd::sandbox::linux_backend {
namespace {

using Clock = std::chrono::steady_clock;

bool contains(const std::string& text, std::string_view needle) {
  return text.find(needle) != std::string::npos;
}

bool has_flag(const std::vector<std::string>& flags, std::string_view flag) {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 200 ? line.substr(0, 200) : line;
}

bool seccomp_filters_available() {
  if (::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) return false;
  uint32_t action = SECCOMP_RET_ERRNO;
  return ::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

// Exec supervision answers with SECCOMP_USER_NOTIF_FLAG_CONTINUE (Linux 5.5) and takes the
// command's stderr with pidfd_getfd (5.6): a kernel that has pidfd_getfd has both.
bool exec_supervision_available() {
  uint32_t action = SECCOMP_RET_USER_NOTIF;
  if (::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) != 0) return false;
  return ::syscall(SYS_pidfd_getfd, -1, 0, 0) != 0 && errno != ENOSYS;
}

std::string true_binary() {
  for (const char* candidate : {"/usr/bin/true", "/bin/true"}) {
    if (::access(candidate, X_OK) == 0) return candidate;
  }
  return "/bin/true";
}

std::string own_cwd() {
  char buf[4096];
  return ::getcwd(buf, sizeof buf) != nullptr ? std::string(buf) : std::string();
}

// Runs the namespace flags the real plans use, so a kernel that refuses one of them is found
// now rather than on the first command.
std::vector<std::string> namespace_probe_argv(const std::string& bwrap, const BwrapFeatures& f, bool with_proc) {
  std::vector<std::string> argv = {bwrap, "--new-session", "--die-with-parent", "--unshare-user"};
  if (f.as_pid_1) argv.push_back("--as-pid-1");
  if (f.disable_userns) argv.push_back("--disable-userns");
  argv.insert(argv.end(), {"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net"});
  if (f.unshare_cgroup_try) argv.push_back("--unshare-cgroup-try");
  if (f.cap_drop) argv.insert(argv.end(), {"--cap-drop", "ALL"});
  argv.insert(argv.end(), {"--ro-bind", "/", "/", "--dev", "/dev"});
  if (with_proc) argv.insert(argv.end(), {"--proc", "/proc"});
  argv.insert(argv.end(), {"--", true_binary()});
  return argv;
}

void probe_bwrap(const LinuxSandboxOptions& options, Clock::time_point deadline, LinuxProbe* probe) {
  CapabilityReport& report = probe->report;
  LinuxCapabilities& caps = probe->caps;
  if (options.no_bwrap) {
    report.warnings.push_back("bwrap disabled by configuration");
    return;
  }
  Result<std::string> bwrap = find_trusted_bwrap(options.bwrap_candidates, own_cwd(), &report.warnings);
  if (!bwrap.ok()) {
    report.warnings.push_back(bwrap.status().message() + "; install bubblewrap for the strongest sandbox");
    return;
  }
  caps.bwrap_path = *bwrap;

  Result<BoundedRunResult> version = run_bounded({*bwrap, "--version"}, deadline);
  if (version.ok() && version->exit_code == 0) caps.bwrap_version = first_line(version->output);
  Result<BoundedRunResult> help = run_bounded({*bwrap, "--help"}, deadline);
  if (!help.ok() || help->timed_out) {
    report.warnings.push_back("bwrap --help did not answer in time");
    return;
  }
  caps.bwrap_flags = parse_bwrap_help_flags(help->output);
  BwrapFeatures& f = probe->features;
  f.disable_userns = has_flag(caps.bwrap_flags, "--disable-userns");
  f.cap_drop = has_flag(caps.bwrap_flags, "--cap-drop");
  f.perms = has_flag(caps.bwrap_flags, "--perms");
  f.unshare_cgroup_try = has_flag(caps.bwrap_flags, "--unshare-cgroup-try");
  f.as_pid_1 = has_flag(caps.bwrap_flags, "--as-pid-1");
  for (std::string_view required : {"--unshare-user", "--unshare-pid", "--die-with-parent",
                                    "--new-session", "--ro-bind-try", "--chdir", "--tmpfs"}) {
    if (!has_flag(caps.bwrap_flags, required)) {
      report.warnings.push_back("bwrap lacks " + std::string(required) + "; not used");
      return;
    }
  }

  f.proc = !options.force_no_proc;
  Result<BoundedRunResult> run = run_bounded(namespace_probe_argv(*bwrap, f, f.proc), deadline);
  if (run.ok() && !run->timed_out && run->exit_code != 0 &&
      classify_bwrap_failure(run->output) == BwrapFailure::kProcMount) {
    report.warnings.push_back("bwrap could not mount /proc; using the no-/proc fallback");
    f.proc = false;
    run = run_bounded(namespace_probe_argv(*bwrap, f, false), deadline);
  }
  if (!run.ok() || run->timed_out) {
    report.warnings.push_back("bwrap namespace probe did not finish within the probe bound");
    return;
  }
  if (run->exit_code != 0) {
    BwrapFailure failure = classify_bwrap_failure(run->output);
    report.warnings.push_back(
        std::string(failure == BwrapFailure::kUserNamespace
                        ? "unprivileged user namespaces are not usable (bwrap: "
                        : "bwrap namespace probe failed (") +
        first_line(run->output) + ")");
    return;
  }
  caps.user_namespaces_usable = true;
  caps.proc_mount_usable = f.proc;
  probe->bwrap_usable = true;
}

void probe_helper(const std::string& helper_path, Clock::time_point deadline, LinuxProbe* probe) {
  CapabilityReport& report = probe->report;
  report.helper_path = helper_path;
  Result<std::string> trusted = verify_trusted_executable(helper_path, ::geteuid());
  if (!trusted.ok()) {
    report.warnings.push_back("sandbox helper unusable: " + trusted.status().message());
    return;
  }
  report.helper_path = *trusted;
  Result<BoundedRunResult> run = run_bounded({*trusted, "--self-test"}, deadline);
  if (!run.ok() || run->timed_out || run->exit_code != 0 ||
      !contains(run->output, "codexd-sandbox-helper ok")) {
    report.warnings.push_back("sandbox helper self-test failed: " +
                              (run.ok() ? first_line(run->output) : run.status().message()));
    return;
  }
  report.helper_usable = true;
}

}  // namespace

std::vector<CapabilityFact> capability_facts(const LinuxCapabilities& caps) {
  std::string bwrap = caps.bwrap_path.empty() ? "(not found)" : caps.bwrap_path;
  if (!caps.bwrap_version.empty()) bwrap += " (" + caps.bwrap_version + ")";
  std::string flags;
  for (const std::string& flag : caps.bwrap_flags) flags += (flags.empty() ? "" : " ") + flag;
  return {
      {"bwrap", bwrap},
      {"bwrap optional flags", flags.empty() ? "(none)" : flags},
      {"unprivileged user namespaces", caps.user_namespaces_usable ? "usable" : "not usable"},
      {"fresh /proc in sandbox", caps.proc_mount_usable ? "yes" : "no (fallback)"},
      {"landlock ABI", std::to_string(caps.landlock_abi)},
      {"seccomp", caps.seccomp_available ? "available" : "not available"},
      {"exec supervision", caps.exec_supervision ? "available (seccomp user notification)" : "not available (needs Linux 5.6)"},
  };
}

BwrapFailure classify_bwrap_failure(const std::string& output) {
  if (contains(output, "Can't mount proc") && contains(output, "/newroot/proc") &&
      (contains(output, "Invalid argument") || contains(output, "Operation not permitted") ||
       contains(output, "Permission denied"))) {
    return BwrapFailure::kProcMount;
  }
  for (std::string_view text : {"loopback: Failed RTM_NEWADDR", "loopback: Failed RTM_NEWLINK",
                                "setting up uid map: Permission denied",
                                "No permissions to create a new namespace",
                                "Creating new namespace failed"}) {
    if (contains(output, text)) return BwrapFailure::kUserNamespace;
  }
  return output.empty() ? BwrapFailure::kNone : BwrapFailure::kOther;
}

std::vector<std::string> parse_bwrap_help_flags(const std::string& help_text) {
  std::vector<std::string> flags;
  size_t pos = 0;
  while (pos < help_text.size()) {
    size_t end = help_text.find('\n', pos);
    if (end == std::string::npos) end = help_text.size();
    std::string line = help_text.substr(pos, end - pos);
    size_t start = line.find_first_not_of(' ');
    if (start != std::string::npos && line.compare(start, 2, "--") == 0) {
      size_t stop = line.find_first_of(" \t", start);
      flags.push_back(line.substr(start, stop == std::string::npos ? std::string::npos : stop - start));
    }
    pos = end + 1;
  }
  return flags;
}

LinuxProbe probe_linux_sandbox(const SandboxManagerOptions& options, const LinuxSandboxOptions& linux_options,
                               const std::string& helper_path) {
  Clock::time_point start = Clock::now();
  Clock::time_point deadline = start + std::chrono::milliseconds(std::max(1, options.probe_timeout_ms));
  LinuxProbe probe;
  CapabilityReport& report = probe.report;

  LinuxCapabilities& caps = probe.caps;
  caps.landlock_abi = landlock_abi_version();
  caps.seccomp_available = seccomp_filters_available();
  caps.exec_supervision = caps.seccomp_available && exec_supervision_available();
  if (!caps.seccomp_available) report.warnings.push_back("seccomp filters are not available");
  probe_helper(helper_path, deadline, &probe);
  if (options.preference != BackendPreference::kLandlock) probe_bwrap(linux_options, deadline, &probe);

  bool helper_ready = report.helper_usable && caps.seccomp_available;
  probe.bwrap_usable = probe.bwrap_usable && helper_ready;
  probe.landlock_usable = caps.landlock_abi >= 1 && helper_ready;
  if (caps.landlock_abi >= 1 && caps.landlock_abi < 6) {
    report.warnings.push_back("Landlock ABI " + std::to_string(caps.landlock_abi) +
                              " cannot scope signals or abstract sockets (needs 6)");
  }

  switch (options.preference) {
    case BackendPreference::kAuto:
      report.chosen = probe.bwrap_usable      ? Backend::kLinuxBwrap
                      : probe.landlock_usable ? Backend::kLinuxLandlock
                                              : Backend::kNone;
      break;
    case BackendPreference::kBwrap:
      report.chosen = probe.bwrap_usable ? Backend::kLinuxBwrap : Backend::kNone;
      break;
    case BackendPreference::kLandlock:
      report.chosen = probe.landlock_usable ? Backend::kLinuxLandlock : Backend::kNone;
      break;
  }
  if (report.chosen == Backend::kLinuxLandlock && options.preference == BackendPreference::kAuto) {
    report.warnings.push_back("bwrap unusable: falling back to Landlock (weaker: no private /tmp or "
                              "/proc, no process isolation beyond Landlock scoping)");
  }
  if (report.chosen == Backend::kNone) {
    report.warnings.push_back("no sandbox backend usable: every sandboxed command will be refused");
  }
  report.exec_supervision = caps.exec_supervision && report.chosen != Backend::kNone;
  report.facts = capability_facts(caps);
  report.probe_millis = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
  return probe;
}

}  // namespace codexd::sandbox::linux_backend
