#include "platform/posix/fd_util.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

namespace codexd::posix {

namespace {

// Sets or clears `bit` in the descriptor's status (F_GETFL/F_SETFL) or descriptor
// (F_GETFD/F_SETFD) flags; `kind` is "FL" or "FD" for the error text.
Status update_fcntl_flag(int fd, int get_cmd, int set_cmd, int bit, bool on, const char* kind) {
  int flags = ::fcntl(fd, get_cmd);
  if (flags < 0) return ErrnoStatus(std::string("fcntl(F_GET") + kind + ")", errno);
  flags = on ? (flags | bit) : (flags & ~bit);
  if (::fcntl(fd, set_cmd, flags) < 0) return ErrnoStatus(std::string("fcntl(F_SET") + kind + ")", errno);
  return Status::Ok();
}

}  // namespace

Status set_nonblocking(int fd, bool nonblocking) {
  return update_fcntl_flag(fd, F_GETFL, F_SETFL, O_NONBLOCK, nonblocking, "FL");
}

Status set_cloexec(int fd, bool cloexec) {
  return update_fcntl_flag(fd, F_GETFD, F_SETFD, FD_CLOEXEC, cloexec, "FD");
}

Result<PipePair> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return ErrnoStatus("pipe2", errno);
  return PipePair{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

Result<UniqueFd> dup_cloexec(int fd) {
  int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (copy < 0) return ErrnoStatus("fcntl(F_DUPFD_CLOEXEC)", errno);
  return UniqueFd(copy);
}

Status write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write", errno);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

namespace {

void close_range_or_each(unsigned first, unsigned last) {
  if (first > last) return;
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, first, last, 0U) == 0) return;
#endif
  const long open_max = ::sysconf(_SC_OPEN_MAX);
  const unsigned limit = open_max > 0 ? static_cast<unsigned>(open_max) : 1024U;
  for (unsigned fd = first; fd <= last && fd < limit; ++fd) ::close(static_cast<int>(fd));
}

}  // namespace

void close_descriptors_from(int first, int keep) { close_descriptors_from(first, keep, -1); }

void close_descriptors_from(int first, int keep, int also_keep) {
  int kept[2] = {std::min(keep, also_keep), std::max(keep, also_keep)};
  unsigned next = static_cast<unsigned>(first);
  for (int fd : kept) {
    if (fd < first || static_cast<unsigned>(fd) < next) continue;
    if (static_cast<unsigned>(fd) > next) close_range_or_each(next, static_cast<unsigned>(fd - 1));
    next = static_cast<unsigned>(fd) + 1;
  }
  close_range_or_each(next, ~0U);
}

}  // namespace codexd::posix
