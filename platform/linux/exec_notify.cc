// Exec supervision on Linux: seccomp user notifications (seccomp_unotify(2)). The listener
// comes from the sandbox helper's filter (execve and execveat notify); the waiting process's
// path and argv are read with process_vm_readv, then the id is checked again so that what was
// read belongs to this very wait (the process could have been killed and its pid reused).
#include "platform/sandbox/exec_notify.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "base/unique_fd.h"
#include "platform/linux/remote_memory.h"

namespace codexd::sandbox {
namespace {

constexpr size_t kMaxPath = 4096;

bool read_pointer(pid_t pid, uint64_t address, uint64_t* value) {
  iovec local{value, sizeof *value};
  iovec remote{reinterpret_cast<void*>(address), sizeof *value};
  return ::process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(sizeof *value);
}

// argv up to its NULL, cut at kMaxExecArgs words or kMaxExecArgBytes bytes.
bool read_argv(pid_t pid, uint64_t address, ExecAttempt* attempt) {
  size_t bytes = 0;
  for (size_t i = 0; address != 0; ++i) {
    if (i == kMaxExecArgs) {
      attempt->argv_truncated = true;
      return true;
    }
    uint64_t word = 0;
    if (!read_pointer(pid, address + i * sizeof(uint64_t), &word)) return false;
    if (word == 0) return true;
    std::string arg;
    const size_t room = kMaxExecArgBytes - bytes;
    if (!linux_backend::read_remote_string(pid, word, room, &arg)) {
      if (arg.size() < room) return false;  // unreadable, not merely long
      attempt->argv_truncated = true;
      return true;
    }
    bytes += arg.size() + 1;
    attempt->argv.push_back(std::move(arg));
  }
  return true;  // argv == NULL: Linux runs the program with an empty argv
}

std::string read_link(const std::string& path) {
  char buffer[kMaxPath];
  const ssize_t n = ::readlink(path.c_str(), buffer, sizeof buffer);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

pid_t read_parent(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 4 > text.size()) return 0;
  // ") S PPID ..." : the state, then the parent.
  return static_cast<pid_t>(std::atoi(text.c_str() + text.find(' ', close + 2) + 1));
}

std::string joined(const std::string& dir, const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  if (dir.empty()) return path;
  return dir.back() == '/' ? dir + path : dir + "/" + path;
}

}  // namespace

bool exec_notify_supported() { return true; }

pid_t parent_pid_of(pid_t pid) { return read_parent(pid); }

Result<ExecAttempt> receive_exec_attempt(int listener) {
  seccomp_notif notification;
  std::memset(&notification, 0, sizeof notification);
  if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &notification) != 0) {
    if (errno == ENOENT) return NotFound("the exec's process went away before it was received");
    if (errno == EINTR || errno == EAGAIN) return Unavailable("no exec is waiting");
    return ErrnoStatus("receiving an exec notification", errno);
  }
  ExecAttempt attempt;
  attempt.id = notification.id;
  attempt.pid = static_cast<pid_t>(notification.pid);
  const auto& args = notification.data.args;
  const bool at = notification.data.nr == __NR_execveat;
  attempt.cwd = read_link("/proc/" + std::to_string(attempt.pid) + "/cwd");
  std::string named;
  const bool readable = linux_backend::read_remote_string(attempt.pid, at ? args[1] : args[0], kMaxPath, &named) &&
                        read_argv(attempt.pid, at ? args[2] : args[1], &attempt);
  if (at) {
    const int dirfd = static_cast<int>(args[0]);
    const bool empty_path = (args[4] & AT_EMPTY_PATH) != 0 && named.empty();
    attempt.by_descriptor = dirfd != AT_FDCWD && (empty_path || named.empty() || named.front() != '/');
    const std::string dir = dirfd == AT_FDCWD ? attempt.cwd
                                              : read_link("/proc/" + std::to_string(attempt.pid) + "/fd/" + std::to_string(dirfd));
    attempt.path = empty_path ? dir : joined(dir, named);
  } else {
    attempt.path = joined(attempt.cwd, named);
  }
  attempt.parent_pid = read_parent(attempt.pid);
  // Only now is it known that all of this was read from the process that still waits.
  uint64_t id = notification.id;
  if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0) {
    return NotFound("the exec's process went away while it was read");
  }
  if (!readable) {
    // Memory the daemon cannot read: nothing can be decided about it (the caller refuses it).
    attempt.readable = false;
    attempt.argv.clear();
  }
  return attempt;
}

Status answer_exec_attempt(int listener, uint64_t id, bool allow) {
  seccomp_notif_resp response;
  std::memset(&response, 0, sizeof response);
  response.id = id;
  if (allow) {
    response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  } else {
    response.error = -EACCES;
  }
  if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &response) != 0) {
    if (errno == ENOENT) return NotFound("the exec's process no longer waits");
    return ErrnoStatus("answering an exec notification", errno);
  }
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
