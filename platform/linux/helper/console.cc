#include "platform/linux/helper/console.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/unique_fd.h"

namespace codexd::sandbox::linux_backend {
namespace {

Status errno_status(const char* step) { return Internal(std::string(step) + ": " + std::strerror(errno)); }

// One message, one descriptor, one byte of payload ("t"). False when the peer is gone.
Result<bool> send_master(int console_fd, int master) {
  char payload = 't';
  iovec iov{&payload, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cmsg), &master, sizeof(int));
  if (::sendmsg(console_fd, &msg, MSG_NOSIGNAL) == 1) return true;
  // No keeper on the other end (a session the daemon runs itself, without a shim), or no such
  // descriptor at all: the host's terminal stays.
  if (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN || errno == EBADF || errno == ENOTSOCK) return false;
  return errno_status("sendmsg (console)");
}

}  // namespace

Result<bool> take_console(int console_fd) {
  UniqueFd socket(console_fd);
  UniqueFd master(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!master) return errno_status("open /dev/ptmx");
  if (::unlockpt(master.get()) != 0) return errno_status("unlockpt");
  char name[64];
  if (::ptsname_r(master.get(), name, sizeof name) != 0) return errno_status("ptsname");
  UniqueFd slave(::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!slave) return Internal(std::string("open ") + name + ": " + std::strerror(errno));
  // The keeper set up the host terminal (size, modes); the command sees the same.
  termios modes{};
  if (::tcgetattr(STDIN_FILENO, &modes) == 0) ::tcsetattr(slave.get(), TCSANOW, &modes);
  winsize size{};
  if (::ioctl(STDIN_FILENO, TIOCGWINSZ, &size) == 0) ::ioctl(slave.get(), TIOCSWINSZ, &size);
  CODEXD_ASSIGN_OR_RETURN(bool taken, send_master(socket.get(), master.get()));
  if (!taken) return false;
  for (int target = 0; target <= 2; ++target) {
    if (::dup2(slave.get(), target) != target) return errno_status("dup2 (console)");
  }
  return true;
}

void become_terminal_session_leader() {
  ::setsid();
  ::ioctl(STDIN_FILENO, TIOCSCTTY, 0);
}

}  // namespace codexd::sandbox::linux_backend
