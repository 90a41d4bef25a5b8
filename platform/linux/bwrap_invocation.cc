#include "platform/linux/bwrap_invocation.h"

#include <sys/stat.h>

#include <algorithm>

#include "platform/sandbox/path_utils.h"

namespace codexd::sandbox::linux_backend {
namespace {

class ArgvBuilder {
 public:
  explicit ArgvBuilder(std::vector<std::string>* argv) : argv_(argv) {}
  void add(std::initializer_list<std::string> words) { argv_->insert(argv_->end(), words); }

 private:
  std::vector<std::string>* argv_;
};

bool under_any(const std::string& path, const std::vector<std::string>& roots) {
  return std::any_of(roots.begin(), roots.end(),
                     [&](const std::string& root) { return is_same_or_under(path, root); });
}

bool by_specificity(const std::string& a, const std::string& b) {
  int da = path_depth(a);
  int db = path_depth(b);
  return da != db ? da < db : a < b;
}

// An empty read-only directory over `path` (bwrap creates the mount point if needed).
void empty_read_only_dir(ArgvBuilder& b, const BwrapFeatures& f, const std::string& path,
                         const char* mode) {
  if (f.perms) b.add({"--perms", mode});
  b.add({"--tmpfs", path, "--remount-ro", path});
}

// How one protected path stays read-only. A protected path that is a symlink cannot be
// protected with mounts: bwrap follows symlinks in mount destinations, and a mount cannot
// pin the link itself, so the command could replace the link with a directory of its own.
// Like Codex's newest builds, refuse rather than pretend (the Landlock backend can pin it).
Status protect(ArgvBuilder& b, const BwrapFeatures& f, const std::string& path,
               const std::vector<std::string>& writable, std::vector<std::string>* rules) {
  if (!under_any(path, writable)) {
    rules->push_back("protected " + path + ": outside every writable root, already read-only");
    return Status::Ok();
  }
  if (std::optional<std::string> link = first_symlink_component(path)) {
    if (under_any(*link, writable)) {
      return FailedPrecondition("protected path " + path + " goes through symlink " + *link +
                                " inside a writable root; the sandbox cannot keep it from being "
                                "replaced (make it a real directory or remove it)");
    }
  }
  ExistingPrefix prefix = split_existing_prefix(path);
  if (prefix.first_missing.empty()) {
    b.add({"--ro-bind", path, path});
    rules->push_back("read-only: " + path);
  } else if (under_any(prefix.first_missing, writable)) {
    empty_read_only_dir(b, f, prefix.first_missing, "555");
    rules->push_back("read-only empty directory over missing " + prefix.first_missing +
                     " (so it cannot be created; bwrap leaves the empty mount point behind)");
  }
  return Status::Ok();
}

// Hides `path` (denied_read, masked): an inaccessible empty tmpfs over a directory, the
// nodev /dev/null (open fails with EACCES) over anything else.
void mask(ArgvBuilder& b, const BwrapFeatures& f, const std::string& path, const char* why,
          std::vector<std::string>* rules) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    rules->push_back(std::string(why) + " " + path + ": does not exist, nothing to hide");
    return;
  }
  if (S_ISDIR(st.st_mode)) {
    empty_read_only_dir(b, f, path, "000");
    rules->push_back(std::string(why) + " " + path + ": empty inaccessible tmpfs");
  } else {
    b.add({"--ro-bind", "/dev/null", path});
    rules->push_back(std::string(why) + " " + path + ": replaced by an unopenable device node");
  }
}

}  // namespace

const std::vector<std::string>& proc_paths_made_read_only() {
  // /proc/sys holds host-wide tunables (kernel.core_pattern runs a program as host root);
  // the others are host-global control files that root in a user namespace may still write.
  static const std::vector<std::string> kPaths = {
      "/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs",
      "/proc/acpi", "/proc/scsi", "/proc/driver", "/proc/asound", "/proc/timer_list",
  };
  return kPaths;
}

namespace {

// bwrap itself, the session and the namespaces.
void add_session_and_namespaces(ArgvBuilder& b, const std::string& bwrap_path, const BwrapFeatures& features,
                                const SandboxSpec& spec, bool keep_controlling_terminal,
                                std::vector<std::string>* rules) {
  // No --new-session: the helper (the sandbox's init) must stay in the session's process
  // group, which is where the daemon's signals go, and on a PTY the command must keep the
  // terminal (job control, Ctrl-C to the foreground job). The injection --new-session guards
  // against (TIOCSTI, CVE-2017-5226) is refused by the helper's seccomp filter, and a pipe
  // session has no controlling terminal at all (the daemon's setsid gave it none).
  b.add({bwrap_path, "--die-with-parent"});
  rules->push_back(keep_controlling_terminal
                       ? "terminal: the command keeps its PTY as controlling terminal; TIOCSTI/TIOCLINUX refused by seccomp"
                       : "terminal: none (pipes); TIOCSTI/TIOCLINUX refused by seccomp");
  // Without --as-pid-1 bwrap keeps an unfiltered reaper as pid 1 in the sandbox; the command
  // could reach it through /proc/1 (e.g. /proc/1/mem where Yama allows). With it, the helper
  // (and then the command) is pid 1 and every process in the sandbox is filtered.
  if (features.as_pid_1) b.add({"--as-pid-1"});
  b.add({"--unshare-user"});
  if (features.disable_userns) b.add({"--disable-userns"});
  b.add({"--unshare-pid", "--unshare-ipc", "--unshare-uts"});
  if (features.unshare_cgroup_try) b.add({"--unshare-cgroup-try"});
  if (spec.network != NetworkMode::kHost) b.add({"--unshare-net"});
  if (features.cap_drop) b.add({"--cap-drop", "ALL"});
  rules->push_back(std::string("namespaces: new user, pid, ipc, uts") +
                   (features.unshare_cgroup_try ? ", cgroup" : "") +
                   (spec.network == NetworkMode::kHost ? "; host network kept" : ", net (loopback only)"));
  rules->push_back(features.disable_userns ? "nested user namespaces: disabled by bwrap (+ seccomp)"
                                           : "nested user namespaces: refused by seccomp only");
  rules->push_back(std::string("new session (no controlling terminal), killed when the parent dies") +
                   (features.as_pid_1 ? "; the command is pid 1 (no unfiltered reaper)" : ""));
}

// The read-only root, a fresh /dev, and /proc (fresh, or the empty no-/proc fallback).
void add_root_dev_and_proc(ArgvBuilder& b, const BwrapFeatures& features, std::vector<std::string>* rules) {
  b.add({"--ro-bind", "/", "/", "--dev", "/dev"});
  rules->push_back("filesystem: / read-only, fresh minimal /dev (private /dev/shm, new devpts)");

  if (features.proc) {
    b.add({"--proc", "/proc"});
    for (const std::string& p : proc_paths_made_read_only()) b.add({"--ro-bind-try", p, p});
    rules->push_back("fresh /proc for the new pid namespace; /proc/sys, /proc/sysrq-trigger and "
                     "other host-global /proc files read-only");
  } else {
    b.add({"--tmpfs", "/proc", "--remount-ro", "/proc"});
    rules->push_back("no-/proc fallback: /proc is an empty read-only tmpfs (the host /proc is "
                     "never exposed)");
  }
}

// /tmp, the writable binds by specificity, then every protection and mask over them.
Status add_writable_and_hidden(ArgvBuilder& b, const BwrapFeatures& features, const SandboxSpec& spec,
                               std::vector<std::string>* rules) {
  std::vector<std::string> writable;
  for (const WritableRoot& root : spec.writable_roots) writable.push_back(root.root);
  std::sort(writable.begin(), writable.end(), by_specificity);
  if (spec.private_tmp) {
    b.add({"--bind", *spec.private_tmp, "/tmp"});
    rules->push_back("private /tmp: " + *spec.private_tmp + " mounted at /tmp (this agent's, kept between its "
                     "commands; host /tmp not visible)");
  } else if (std::find(writable.begin(), writable.end(), "/tmp") == writable.end()) {
    b.add({"--tmpfs", "/tmp"});
    rules->push_back("private /tmp (tmpfs, discarded at exit)");
  }
  for (const std::string& root : writable) {
    b.add({"--bind", root, root});
    rules->push_back("writable: " + root);
  }

  // All protections after all writable binds, so a protection always wins over a root.
  std::vector<std::string> protected_paths;
  for (const WritableRoot& root : spec.writable_roots) {
    for (const std::string& sub : root.read_only_subpaths) {
      if (std::find(protected_paths.begin(), protected_paths.end(), sub) == protected_paths.end()) {
        protected_paths.push_back(sub);
      }
    }
  }
  std::stable_sort(protected_paths.begin(), protected_paths.end(), by_specificity);
  for (const std::string& path : protected_paths) {
    CODEXD_RETURN_IF_ERROR(protect(b, features, path, writable, rules));
  }

  for (const std::string& path : spec.denied_read) mask(b, features, path, "unreadable", rules);
  for (const std::string& path : spec.masked_paths) mask(b, features, path, "masked", rules);
  return Status::Ok();
}

}  // namespace

Result<BwrapInvocation> build_bwrap_invocation(const std::string& bwrap_path, const BwrapFeatures& features,
                                               const SandboxSpec& spec, const std::string& command_cwd,
                                               const std::vector<std::string>& helper_argv,
                                               bool keep_controlling_terminal) {
  if (spec.mode == SandboxMode::kDangerFullAccess) {
    return InvalidArgument("danger-full-access runs without bwrap");
  }
  if (helper_argv.empty() || helper_argv.front().empty() || helper_argv.front().front() != '/') {
    return InvalidArgument("helper path must be absolute");
  }
  CODEXD_RETURN_IF_ERROR(validate_absolute_path(command_cwd, "cwd"));

  BwrapInvocation out;
  ArgvBuilder b(&out.argv);
  add_session_and_namespaces(b, bwrap_path, features, spec, keep_controlling_terminal, &out.rules);
  add_root_dev_and_proc(b, features, &out.rules);
  CODEXD_RETURN_IF_ERROR(add_writable_and_hidden(b, features, spec, &out.rules));

  // Last: the helper must be reachable (even below a private /tmp or a mask) and unchangeable.
  const std::string& helper = helper_argv.front();
  b.add({"--ro-bind", helper, helper});
  b.add({"--chdir", command_cwd, "--"});
  out.argv.insert(out.argv.end(), helper_argv.begin(), helper_argv.end());
  return out;
}

}  // namespace codexd::sandbox::linux_backend
