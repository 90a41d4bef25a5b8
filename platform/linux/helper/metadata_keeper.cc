#include "platform/linux/helper/metadata_keeper.h"

#include <asm/unistd.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "platform/linux/helper/exec_forwarder.h"
#include "platform/linux/landlock_sys.h"
#include "platform/linux/writable_scope.h"
#include "platform/linux/helper/run_command.h"
#include "platform/linux/remote_memory.h"
#include "platform/linux/seccomp_filter.h"
#include "platform/linux/seccomp_program.h"
#include "platform/posix/fd_passing.h"
#include "platform/posix/fd_util.h"

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif

namespace codexd::sandbox::linux_backend {
namespace {

constexpr int kSetupFailed = 126;
// SECCOMP_IOCTL_NOTIF_SET_FLAGS and SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (Linux 6.6), newer than
// Debian 12's headers.
constexpr unsigned long kNotifSetFlags = _IOW('!', 4, uint64_t);
constexpr uint64_t kSyncWakeUp = 1;
constexpr int kGone = -1;  // the calling process no longer waits: nothing to answer

// One chmod- or chown-family call, in the terms of fchmodat2 and fchownat.
struct FileCall {
  bool chown = false;
  int dirfd = AT_FDCWD;
  uint64_t path = 0;
  bool has_path = true;
  uint64_t flags = 0;
  mode_t mode = 0;
  uid_t owner = static_cast<uid_t>(-1);
  gid_t group = static_cast<gid_t>(-1);
};

FileCall decode(const seccomp_data& data) {
  const auto& arg = data.args;
  FileCall call;
  // Where the path (or the descriptor) is, and where the mode or owner and group follow.
  size_t next = 1;
  switch (data.nr) {
    case __NR_chmod: case __NR_chown: case __NR_lchown:
      call.path = arg[0];
      if (data.nr == __NR_lchown) call.flags = AT_SYMLINK_NOFOLLOW;
      break;
    case __NR_fchmod: case __NR_fchown:
      call.dirfd = static_cast<int>(arg[0]);
      call.has_path = false;
      call.flags = AT_EMPTY_PATH;
      break;
    default:  // fchmodat (no flags argument), fchmodat2, fchownat
      call.dirfd = static_cast<int>(arg[0]);
      call.path = arg[1];
      next = 2;
      if (data.nr == __NR_fchmodat2) call.flags = arg[3];
      if (data.nr == __NR_fchownat) call.flags = arg[4];
      break;
  }
  call.chown = data.nr == __NR_chown || data.nr == __NR_lchown || data.nr == __NR_fchown || data.nr == __NR_fchownat;
  if (call.chown) {
    call.owner = static_cast<uid_t>(arg[next]);
    call.group = static_cast<gid_t>(arg[next + 1]);
  } else {
    call.mode = static_cast<mode_t>(arg[next]) & 07777;  // what the kernel keeps of a mode
  }
  return call;
}

std::string proc_entry(pid_t pid, const std::string& entry) { return "/proc/" + std::to_string(pid) + "/" + entry; }

// "/proc/self" and its aliases name the process that opens them: opened by the keeper, they
// would name the keeper. glibc's lchmod, for one, goes through "/proc/self/fd/N". (A symlink
// to them still resolves to the keeper; that can only reach the keeper's own descriptors, and
// the scope checks whatever it reaches.)
std::string as_caller(const std::string& path, pid_t pid) {
  const std::string own = "/proc/" + std::to_string(pid);
  for (const auto& [alias, real] : {std::pair<std::string, std::string>{"/proc/self", own},
                                    {"/proc/thread-self", own + "/task/" + std::to_string(pid)},
                                    {"/dev/fd", own + "/fd"}}) {
    if (path == alias || path.compare(0, alias.size() + 1, alias + "/") == 0) return real + path.substr(alias.size());
  }
  return path;
}

// Whether descriptor `fd` of `pid` was opened O_PATH (its "flags:" in /proc/PID/fdinfo, octal).
// fchmod and fchown of such a descriptor fail with EBADF in the kernel; so they must here.
bool opened_o_path(pid_t pid, int fd) {
  UniqueFd info(::open(proc_entry(pid, "fdinfo/" + std::to_string(fd)).c_str(), O_RDONLY | O_CLOEXEC));
  char text[512];
  const ssize_t got = info ? ::read(info.get(), text, sizeof text - 1) : -1;
  if (got <= 0) return false;
  text[got] = '\0';
  const char* flags = std::strstr(text, "flags:");
  return flags != nullptr && (std::strtoul(flags + 6, nullptr, 8) & O_PATH) != 0;
}

int apply(const FileCall& call, const WritableScope& scope, int target) {
  return call.chown ? scope.change_owner(target, call.owner, call.group) : scope.change_mode(target, call.mode);
}

// Performs the waiting call: opens its file as the caller named it (the caller's cwd or
// descriptor, read through /proc), checks that the wait is still this process's, and asks
// the scope. Returns 0, an errno, or kGone.
int perform(int listener, const seccomp_notif& notification, const WritableScope& scope) {
  const FileCall call = decode(notification.data);
  if ((call.flags & ~static_cast<uint64_t>(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) != 0) return EINVAL;
  const pid_t pid = static_cast<pid_t>(notification.pid);
  std::string path;
  if (call.has_path && !read_remote_string(pid, call.path, PATH_MAX, &path)) {
    return path.size() >= PATH_MAX ? ENAMETOOLONG : EFAULT;
  }
  path = as_caller(path, pid);
  if (path.empty() && (call.flags & AT_EMPTY_PATH) == 0) return ENOENT;
  UniqueFd base;
  if (path.empty() || path.front() != '/') {
    const std::string where = call.dirfd == AT_FDCWD ? proc_entry(pid, "cwd") : proc_entry(pid, "fd/" + std::to_string(call.dirfd));
    base = UniqueFd(::open(where.c_str(), O_PATH | O_CLOEXEC));
    if (!base) return EBADF;
    if (!call.has_path && opened_o_path(pid, call.dirfd)) return EBADF;
  }
  // Only now is it known that what was read and opened belongs to this very wait (the
  // process could have been killed and its pid reused).
  uint64_t id = notification.id;
  if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0) return kGone;
  if (path.empty()) return apply(call, scope, base.get());
  const int nofollow = (call.flags & AT_SYMLINK_NOFOLLOW) != 0 ? O_NOFOLLOW : 0;
  UniqueFd target(::openat(base ? base.get() : AT_FDCWD, path.c_str(), O_PATH | O_CLOEXEC | nofollow));
  if (!target) return errno;
  return apply(call, scope, target.get());
}

void serve_one(int listener, const WritableScope& scope, ExecForwarder* execs) {
  seccomp_notif notification;
  std::memset(&notification, 0, sizeof notification);
  if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &notification) != 0) return;  // gone already, or EINTR
  if (is_exec_notification(notification)) {
    if (execs != nullptr) {
      execs->on_exec(listener, notification);
      return;
    }
    answer_notification(listener, notification.id, true);  // not supervised: no exec rule sends one
    return;
  }
  const int result = perform(listener, notification, scope);
  if (result == kGone) return;
  seccomp_notif_resp response;
  std::memset(&response, 0, sizeof response);
  response.id = notification.id;
  response.error = -result;
  // ENOENT: killed while we worked; the change, if made, stands, as it would for the command.
  (void)::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &response);
}

[[noreturn]] void keep(pid_t child, UniqueFd link, const HelperConfig& config, UniqueFd exec_relay,
                       const std::vector<sock_filter>* keeper_program) {
  // The command shares the keeper's uid and Landlock domain: not dumpable, the keeper's /proc
  // entries (its descriptors, its memory) are closed to it.
  ::prctl(PR_SET_DUMPABLE, 0);
  // The proxy ports, the channel and the like are the command's to hand over, not the keeper's.
  posix::close_descriptors_from(3, link.get(), exec_relay.get());
  const WritableScope scope(config.writable, config.read_only);
  // The keeper reads what the command hands it: it keeps the command's rules except chmod and
  // chown, and may exec nothing. Rather than an unfiltered process in the sandbox, none at all.
  const Status filtered = keeper_program != nullptr ? load_seccomp_program(*keeper_program) : install_keeper_filter(config);
  if (!filtered.ok()) {
    std::fprintf(stderr, "codexd-sandbox-helper: keeper seccomp: %s\n", filtered.to_string().c_str());
    ::kill(child, SIGKILL);
    ::_exit(kSetupFailed);
  }
  Result<posix::ReceivedFds> received = posix::receive_fds(link.get());
  UniqueFd listener;
  // Otherwise the child failed before its filter was loaded (it said why and exits 126):
  // only its exit is left to wait for.
  if (received.ok() && received->fds.size() == 1) {
    listener = std::move(received->fds.front());
    // The command waits for each answer while the keeper works: wake the keeper on the
    // waiting task's CPU rather than through the scheduler (Linux 6.6; ignored before).
    uint64_t sync_wake = kSyncWakeUp;
    (void)::ioctl(listener.get(), kNotifSetFlags, sync_wake);
    // The command waits for this: it never runs beside an unfiltered keeper.
    if (::write(link.get(), "k", 1) != 1) ::kill(child, SIGKILL);
  }
  link.reset();
  std::optional<ExecForwarder> execs;
  if (exec_relay) execs.emplace(std::move(exec_relay), config.exec_audit_only);
  Supervision supervision;
  supervision.listener = listener.get();
  supervision.serve = [&scope, &execs](int fd) { serve_one(fd, scope, execs ? &*execs : nullptr); };
  if (execs) {
    supervision.relay = execs->relay();
    supervision.relay_events = [&execs] { return execs->wanted_events(); };
    supervision.on_relay = [&execs, fd = listener.get()](short revents) { execs->on_relay(fd, revents); };
    supervision.timeout_ms = [&execs] { return execs->timeout_ms(); };
    supervision.on_timeout = [&execs, fd = listener.get()] { execs->on_timeout(fd); };
  }
  supervision.reraise = !config.init;  // pid 1 cannot die of its own signal
  supervise_command(child, supervision);
}

// Under Landlock the command shares the keeper's uid and domain, so it could stop (SIGSTOP) or
// kill its keeper and hang its own chmods. A domain of its own, handling nothing but signals,
// scopes its signals to itself and what it starts (ABI 6); the keeper still signals into it.
// Under bwrap the keeper is the namespace's init, which the kernel already shields.
Status scope_signals_to_command(const HelperConfig& config) {
  if (config.mode != HelperMode::kLandlock) return Status::Ok();
  const int abi = landlock_abi_version();
  if (abi < 6) return Status::Ok();  // reported in the plan: docs/sandbox.md §4c
  UniqueFd ruleset(landlock_create_ruleset_fd(0, 0, landlock::kScopeSignal, abi));
  if (!ruleset) return ErrnoStatus("landlock_create_ruleset (signal scope)", errno);
  if (landlock_restrict_self_fd(ruleset.get()) != 0) return ErrnoStatus("landlock_restrict_self (signal scope)", errno);
  return Status::Ok();
}

}  // namespace

Result<UniqueFd> start_metadata_keeper(const HelperConfig& config, bool own_terminal, UniqueFd exec_relay,
                                       const std::vector<sock_filter>* keeper_program) {
  CODEXD_ASSIGN_OR_RETURN(posix::SocketPair link, posix::make_seqpacket_pair());
  const pid_t keeper = ::getpid();
  const pid_t child = fork_command(own_terminal);
  if (child == 0) {
    // Without its keeper the command's chmods would fail and nobody would report its exit.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != keeper) ::_exit(kSetupFailed);
    if (Status scoped = scope_signals_to_command(config); !scoped.ok()) {
      std::fprintf(stderr, "codexd-sandbox-helper: metadata keeper: %s\n", scoped.to_string().c_str());
      ::_exit(kSetupFailed);
    }
    link.first.reset();
    exec_relay.reset();
    return std::move(link.second);
  }
  link.second.reset();
  keep(child, std::move(link.first), config, std::move(exec_relay), keeper_program);
}

Status hand_listener_to_keeper(UniqueFd link, UniqueFd listener) {
  if (!listener) return Internal("metadata keeper: the filter has no listener");
  CODEXD_RETURN_IF_ERROR(posix::send_fds(link.get(), "l", {listener.get()}));
  listener.reset();
  char ack = 0;
  if (::read(link.get(), &ack, 1) != 1 || ack != 'k') return Internal("metadata keeper: no answer from the keeper");
  return Status::Ok();
}

}  // namespace codexd::sandbox::linux_backend
