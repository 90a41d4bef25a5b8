#include "platform/posix/fd_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace codexd::posix {

Status set_nonblocking(int fd, bool nonblocking) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return ErrnoStatus("fcntl(F_GETFL)", errno);
  flags = nonblocking ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
  if (::fcntl(fd, F_SETFL, flags) < 0) return ErrnoStatus("fcntl(F_SETFL)", errno);
  return Status::Ok();
}

Status set_cloexec(int fd, bool cloexec) {
  int flags = ::fcntl(fd, F_GETFD);
  if (flags < 0) return ErrnoStatus("fcntl(F_GETFD)", errno);
  flags = cloexec ? (flags | FD_CLOEXEC) : (flags & ~FD_CLOEXEC);
  if (::fcntl(fd, F_SETFD, flags) < 0) return ErrnoStatus("fcntl(F_SETFD)", errno);
  return Status::Ok();
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

}  // namespace codexd::posix
