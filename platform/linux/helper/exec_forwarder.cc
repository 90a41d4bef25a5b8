#include "platform/linux/helper/exec_forwarder.h"

#include <asm/unistd.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "platform/linux/remote_memory.h"
#include "platform/posix/fd_passing.h"
#include "platform/sandbox/exec_relay.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

namespace codexd::sandbox::linux_backend {
namespace {

// Records a daemon that is away (a restart) has not read yet: past this, audit mode drops
// them rather than grow. Enforce never drops one: each stands for a process that waits.
constexpr size_t kMaxQueuedAudit = 1024;

std::string read_link(const std::string& path) {
  char buffer[kMaxRecordPath];
  const ssize_t n = ::readlink(path.c_str(), buffer, sizeof buffer);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

std::string joined(const std::string& dir, const std::string& path) {
  if (path.empty() || path.front() == '/' || dir.empty()) return path;
  return dir.back() == '/' ? dir + path : dir + "/" + path;
}

// What the waiting process asks to run, read from its memory and /proc entries.
ExecRecord read_record(const seccomp_notif& notification) {
  ExecRecord record;
  record.id = notification.id;
  const pid_t pid = static_cast<pid_t>(notification.pid);
  const std::string proc = "/proc/" + std::to_string(pid);
  const auto& args = notification.data.args;
  const bool at = notification.data.nr == __NR_execveat;
  record.cwd = read_link(proc + "/cwd");
  std::string named;
  const RemoteMemory memory(pid);
  record.readable = memory.string_at(at ? args[1] : args[0], kMaxRecordPath, &named) &&
                    memory.argv_at(at ? args[2] : args[1], kMaxRecordArgs, kMaxRecordArgBytes, &record.argv,
                                   &record.argv_truncated);
  if (at) {
    const int dirfd = static_cast<int>(args[0]);
    const bool empty_path = (args[4] & AT_EMPTY_PATH) != 0 && named.empty();
    record.by_descriptor = dirfd != AT_FDCWD && (empty_path || named.empty() || named.front() != '/');
    const std::string dir = dirfd == AT_FDCWD ? record.cwd : read_link(proc + "/fd/" + std::to_string(dirfd));
    record.path = empty_path ? dir : joined(dir, named);
  } else {
    record.path = joined(record.cwd, named);
  }
  if (record.path.size() > kMaxRecordPath) record.path.resize(kMaxRecordPath);
  if (!record.readable) record.argv.clear();
  return record;
}

}  // namespace

void answer_notification(int listener, uint64_t id, bool allow) {
  seccomp_notif_resp response;
  std::memset(&response, 0, sizeof response);
  response.id = id;
  if (allow) {
    response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  } else {
    response.error = -EACCES;
  }
  (void)::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &response);  // ENOENT: killed meanwhile
}

namespace {

UniqueFd open_pidfd(pid_t pid) {
  UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  // A thread other than the leader execs (the kernel then makes it the leader): its own pidfd.
  if (!fd && errno == EINVAL) fd.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, PIDFD_THREAD)));
  return fd;
}

}  // namespace

bool is_exec_notification(const seccomp_notif& notification) {
  return notification.data.nr == __NR_execve || notification.data.nr == __NR_execveat;
}

ExecForwarder::ExecForwarder(UniqueFd relay, bool audit_only) : relay_(std::move(relay)), audit_only_(audit_only) {
  const int flags = ::fcntl(relay_.get(), F_GETFL);
  if (flags >= 0) ::fcntl(relay_.get(), F_SETFL, flags | O_NONBLOCK);
}

short ExecForwarder::wanted_events() const {
  if (closed_) return 0;
  return static_cast<short>(POLLIN | (queued_.empty() ? 0 : POLLOUT));
}

void ExecForwarder::on_exec(int listener, const seccomp_notif& notification) {
  const ExecRecord record = read_record(notification);
  UniqueFd pidfd = open_pidfd(static_cast<pid_t>(notification.pid));
  // Only now is it known that what was read belongs to this very wait.
  uint64_t id = notification.id;
  if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0) return;
  if (closed_ || !pidfd) {
    // No daemon will ever decide (or nothing to show it): enforce refuses, audit lets go.
    answer_notification(listener, notification.id, audit_only_);
    return;
  }
  if (audit_only_ && queued_.size() >= kMaxQueuedAudit) {
    answer_notification(listener, notification.id, true);  // dropped rather than grow
    return;
  }
  std::string payload = encode_exec_record(record);
  if (!queued_.empty() || !send(payload, pidfd.get())) queued_.push_back({std::move(payload), std::move(pidfd)});
  waiting_[notification.id] = audit_only_ ? std::chrono::steady_clock::now() + kAuditWait
                                          : std::chrono::steady_clock::time_point::max();
  if (closed_) relay_closed(listener);  // answers it, and every other waiting one
}

int ExecForwarder::timeout_ms() const {
  if (!audit_only_ || waiting_.empty()) return -1;
  auto first = std::chrono::steady_clock::time_point::max();
  for (const auto& [id, until] : waiting_) first = std::min(first, until);
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(first - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

void ExecForwarder::on_timeout(int listener) {
  if (!audit_only_) return;  // enforce waits have no end of their own
  const auto now = std::chrono::steady_clock::now();
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (it->second > now) {
      ++it;
      continue;
    }
    answer_notification(listener, it->first, true);
    it = waiting_.erase(it);
  }
}

void ExecForwarder::on_relay(int listener, short revents) {
  if ((revents & POLLOUT) != 0) flush();
  if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0) read_verdicts(listener);
  if (closed_) relay_closed(listener);
}

// False: not sent now (queue it); a relay that is gone for good sets closed_.
bool ExecForwarder::send(const std::string& payload, int pidfd) {
  Status sent = posix::send_message_with_fds(relay_.get(), payload, {pidfd}, kMaxRecordBytes);
  if (sent.ok()) return true;
  if (sent.code() != StatusCode::kUnavailable) closed_ = true;
  return false;
}

void ExecForwarder::flush() {
  while (!queued_.empty() && !closed_) {
    if (!send(queued_.front().payload, queued_.front().pidfd.get())) return;
    queued_.pop_front();
  }
}

void ExecForwarder::read_verdicts(int listener) {
  for (;;) {
    Result<std::string> message = posix::receive_message(relay_.get(), 64);
    if (!message.ok()) {
      if (message.status().code() == StatusCode::kUnavailable) return;
      if (message.status().code() == StatusCode::kInvalidArgument) {
        char discard[64];
        (void)::recv(relay_.get(), discard, sizeof discard, MSG_DONTWAIT);  // too long: not a verdict
        continue;
      }
      closed_ = true;  // the daemon's side is gone for good (no shim keeps it)
      return;
    }
    Result<ExecVerdict> verdict = parse_exec_verdict(*message);
    if (!verdict.ok() || waiting_.erase(verdict->id) == 0) continue;  // unknown, or already answered
    answer_notification(listener, verdict->id, verdict->allow);
  }
}

void ExecForwarder::relay_closed(int listener) {
  for (const auto& [id, until] : waiting_) answer_notification(listener, id, audit_only_);
  waiting_.clear();
  queued_.clear();
}

}  // namespace codexd::sandbox::linux_backend
