#include "platform/posix/pty.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>

namespace codexd::posix {

Result<PtyPair> open_pty(unsigned short rows, unsigned short cols) {
  UniqueFd master(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!master) return ErrnoStatus("posix_openpt", errno);
  if (::grantpt(master.get()) != 0) return ErrnoStatus("grantpt", errno);
  if (::unlockpt(master.get()) != 0) return ErrnoStatus("unlockpt", errno);
  // TIOCGPTPEER opens the peer without a path lookup (no race with /dev/pts renames).
  int slave_fd = ::ioctl(master.get(), TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave_fd < 0) {
    char name[128];
    if (::ptsname_r(master.get(), name, sizeof name) != 0) return ErrnoStatus("ptsname_r", errno);
    slave_fd = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave_fd < 0) return ErrnoStatus("open pty slave", errno);
  }
  PtyPair pair{std::move(master), UniqueFd(slave_fd)};
  CODEXD_RETURN_IF_ERROR(resize_pty(pair.master.get(), rows, cols));
  return pair;
}

Status resize_pty(int master_fd, unsigned short rows, unsigned short cols) {
  struct winsize ws {};
  ws.ws_row = rows;
  ws.ws_col = cols;
  if (::ioctl(master_fd, TIOCSWINSZ, &ws) != 0) return ErrnoStatus("ioctl(TIOCSWINSZ)", errno);
  return Status::Ok();
}

Result<std::pair<unsigned short, unsigned short>> pty_size(int master_fd) {
  struct winsize ws {};
  if (::ioctl(master_fd, TIOCGWINSZ, &ws) != 0) return ErrnoStatus("ioctl(TIOCGWINSZ)", errno);
  return std::make_pair(ws.ws_row, ws.ws_col);
}

}  // namespace codexd::posix
