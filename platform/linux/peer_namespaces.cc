#include "platform/linux/peer_namespaces.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/unique_fd.h"

namespace codexd::sandbox::linux_backend {
namespace {

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

void set_why(std::string* why, std::string text) {
  if (why != nullptr) *why = std::move(text);
}

bool same_namespace(pid_t pid, const char* ns, std::string* why, bool* gone = nullptr) {
  struct stat mine {};
  struct stat theirs {};
  std::string own_path = std::string("/proc/self/ns/") + ns;
  std::string peer_path = "/proc/" + std::to_string(pid) + "/ns/" + ns;
  if (::stat(own_path.c_str(), &mine) != 0) {
    set_why(why, "cannot read " + own_path + ": " + std::strerror(errno));
    return false;
  }
  if (::stat(peer_path.c_str(), &theirs) != 0) {
    if (gone != nullptr) *gone = errno == ENOENT || errno == ESRCH;
    set_why(why, "cannot read " + peer_path + ": " + std::strerror(errno));
    return false;
  }
  if (mine.st_dev != theirs.st_dev || mine.st_ino != theirs.st_ino) {
    set_why(why, "peer pid " + std::to_string(pid) + " is in a different " + ns + " namespace");
    return false;
  }
  return true;
}

}  // namespace

bool peer_in_same_namespaces(pid_t pid, std::string* why) {
  if (pid <= 0) {
    set_why(why, "peer pid " + std::to_string(pid) +
                     ": the peer is in a pid namespace the daemon cannot see");
    return false;
  }
  return same_namespace(pid, "user", why) && same_namespace(pid, "pid", why);
}

bool socket_peer_in_same_namespaces(int socket_fd, std::string* why, bool* peer_gone) {
  bool gone = false;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    set_why(why, std::string("SO_PEERCRED: ") + std::strerror(errno));
    return false;
  }
  int raw_pidfd = -1;
  len = sizeof raw_pidfd;
  bool pinned = ::getsockopt(socket_fd, SOL_SOCKET, SO_PEERPIDFD, &raw_pidfd, &len) == 0 && raw_pidfd >= 0;
  UniqueFd pidfd(pinned ? raw_pidfd : -1);
  if (cred.pid <= 0 || !same_namespace(cred.pid, "user", why, &gone) || !same_namespace(cred.pid, "pid", why, &gone)) {
    if (cred.pid <= 0) peer_in_same_namespaces(cred.pid, why);  // says why
    // A pinned peer that has exited is gone whatever /proc said; without a pidfd, only a
    // missing /proc entry says so.
    if (peer_gone != nullptr) {
      *peer_gone = cred.pid > 0 && (gone || (pidfd.valid() && ::syscall(SYS_pidfd_send_signal, pidfd.get(), 0, nullptr, 0) != 0));
    }
    return false;
  }
  // The /proc lookup above went by pid; if the pinned peer is still alive, that pid was
  // still the peer's when we looked (a live process's pid cannot be reused).
  if (pidfd.valid() && ::syscall(SYS_pidfd_send_signal, pidfd.get(), 0, nullptr, 0) != 0) {
    set_why(why, "peer exited before its namespaces could be verified");
    if (peer_gone != nullptr) *peer_gone = true;
    return false;
  }
  return true;
}

}  // namespace codexd::sandbox::linux_backend
