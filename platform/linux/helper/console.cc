#include "platform/linux/helper/console.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "base/unique_fd.h"
#include "platform/posix/fd_passing.h"

namespace codexd::sandbox::linux_backend {
namespace {

// The other end is closed (or there is no such descriptor): a session the daemon runs itself,
// without a shim to take the master.
bool nobody_at(int console_fd) {
  pollfd p{console_fd, POLLOUT, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLNVAL)) != 0;
}

}  // namespace

Result<bool> take_console(int console_fd) {
  UniqueFd socket(console_fd);
  UniqueFd master(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!master) return ErrnoStatus("open /dev/ptmx", errno);
  if (::unlockpt(master.get()) != 0) return ErrnoStatus("unlockpt", errno);
  char name[64];
  if (::ptsname_r(master.get(), name, sizeof name) != 0) return ErrnoStatus("ptsname", errno);
  UniqueFd slave(::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!slave) return ErrnoStatus(std::string("open ") + name, errno);
  // The keeper set up the host terminal (size, modes); the command sees the same.
  termios modes{};
  if (::tcgetattr(STDIN_FILENO, &modes) == 0) ::tcsetattr(slave.get(), TCSANOW, &modes);
  winsize size{};
  if (::ioctl(STDIN_FILENO, TIOCGWINSZ, &size) == 0) ::ioctl(slave.get(), TIOCSWINSZ, &size);
  if (nobody_at(socket.get())) return false;  // the host's terminal stays
  if (Status sent = posix::send_fds(socket.get(), "t", {master.get()}); !sent.ok()) {
    if (nobody_at(socket.get())) return false;  // it went away just now
    return sent;
  }
  for (int target = 0; target <= 2; ++target) {
    if (::dup2(slave.get(), target) != target) return ErrnoStatus("dup2 (console)", errno);
  }
  return true;
}

void become_terminal_session_leader() {
  ::setsid();
  ::ioctl(STDIN_FILENO, TIOCSCTTY, 0);
}

}  // namespace codexd::sandbox::linux_backend
