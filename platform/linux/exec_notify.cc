// Exec supervision on Linux, the daemon's side of the exec relay: the sandbox's keeper serves
// the filter's seccomp listener and sends a record of each exec with the process's pidfd
// (platform/sandbox/exec_relay.h). The pidfd names the process in the daemon's pid namespace
// and pins it: whatever is read here through /proc belongs to it as long as it has not exited,
// which is checked last. The keeper checks that the wait is still the same before answering.
#include "platform/sandbox/exec_notify.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/unique_fd.h"
#include "platform/posix/fd_passing.h"
#include "platform/sandbox/exec_relay.h"

namespace codexd::sandbox {
namespace {

// The start of a small /proc file (one read; these are generated whole): "" when unreadable.
std::string read_proc_text(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  char buffer[1024];
  const ssize_t n = fd ? ::read(fd.get(), buffer, sizeof buffer) : -1;
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

pid_t read_parent(pid_t pid) {
  const std::string text = read_proc_text("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 4 > text.size()) return 0;
  // ") S PPID ..." : the state, then the parent.
  return static_cast<pid_t>(std::atoi(text.c_str() + text.find(' ', close + 2) + 1));
}

// The pid a pidfd names, in this process's pid namespace ("Pid:" of its fdinfo); 0 or less
// when it has exited or is not visible here.
pid_t pid_of(int pidfd) {
  const std::string text = read_proc_text("/proc/self/fdinfo/" + std::to_string(pidfd));
  const size_t at = text.find("\nPid:");
  return at == std::string::npos ? 0 : static_cast<pid_t>(std::atol(text.c_str() + at + 5));
}

bool has_exited(int pidfd) {
  pollfd p{pidfd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

}  // namespace

bool exec_notify_supported() { return true; }

pid_t parent_pid_of(pid_t pid) { return read_parent(pid); }

Result<ExecAttempt> receive_exec_attempt(int relay) {
  Result<posix::ReceivedFds> message = posix::receive_message_with_fds(relay, kMaxRecordBytes);
  if (!message.ok()) {
    if (message.status().code() == StatusCode::kNotFound) return FailedPrecondition("the sandbox's keeper closed the exec relay");
    return message.status();  // kUnavailable, kInvalidArgument (taken off), or the socket failed
  }
  if (message->fds.size() != 1) return InvalidArgument("exec record without the process's pidfd");
  Result<ExecRecord> record = parse_exec_record(message->payload);
  if (!record.ok()) return record.status();
  const int pidfd = message->fds.front().get();
  ExecAttempt attempt;
  attempt.id = record->id;
  attempt.pid = pid_of(pidfd);
  if (attempt.pid <= 0) return NotFound("the exec's process went away before it was received");
  attempt.path = std::move(record->path);
  attempt.cwd = std::move(record->cwd);
  attempt.argv = std::move(record->argv);
  attempt.argv_truncated = record->argv_truncated;
  attempt.readable = record->readable;
  attempt.by_descriptor = record->by_descriptor;
  attempt.parent_pid = read_parent(attempt.pid);
  // Only now is it known that the parent read belongs to this very process.
  if (has_exited(pidfd)) return NotFound("the exec's process went away while it was read");
  return attempt;
}

Status answer_exec_attempt(int relay, uint64_t id, bool allow) {
  const std::string verdict = encode_exec_verdict({id, allow});
  ssize_t sent;
  do {
    sent = ::send(relay, verdict.data(), verdict.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Unavailable("the sandbox's keeper is not reading its verdicts");
  if (sent < 0) return ErrnoStatus("answering an exec", errno);
  return Status::Ok();
}

void tell_process(pid_t pid, std::string_view line) {
  UniqueFd process(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!process.valid()) return;
  // The process's own open file description: what it may write, and nothing it may not.
  UniqueFd err(static_cast<int>(::syscall(SYS_pidfd_getfd, process.get(), STDERR_FILENO, 0)));
  if (!err.valid()) return;
  struct stat st;
  if (::fstat(err.get(), &st) != 0) return;
  const int access = ::fcntl(err.get(), F_GETFL) & O_ACCMODE;
  if (access == O_RDONLY) return;
  iovec text{const_cast<char*>(line.data()), line.size()};
  ssize_t written = 0;  // best effort: a full pipe or a gone reader loses the line, nothing else
  if (S_ISFIFO(st.st_mode)) {
    written = ::pwritev2(err.get(), &text, 1, -1, RWF_NOWAIT);
  } else if (S_ISCHR(st.st_mode) && ::isatty(err.get()) == 1) {
    // A terminal takes no RWF_NOWAIT; a description of its own can be non-blocking without
    // touching the process's.
    UniqueFd own(::open(("/proc/self/fd/" + std::to_string(err.get())).c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (own.valid()) written = ::write(own.get(), line.data(), line.size());
  }
  (void)written;
}

}  // namespace codexd::sandbox
