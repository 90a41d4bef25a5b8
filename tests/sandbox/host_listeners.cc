#include "tests/sandbox/host_listeners.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace codexd::sandbox::testing {
namespace {

socklen_t unix_address(const std::string& path, bool abstract, sockaddr_un* addr) {
  std::memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  if (abstract) {
    std::memcpy(addr->sun_path + 1, path.data(), path.size());
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + path.size());
  }
  std::memcpy(addr->sun_path, path.data(), path.size());
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + 1);
}

}  // namespace

HostListener::HostListener(ListenerKind kind, const std::string& path_or_name) : kind_(kind) {
  int family = AF_INET;
  int type = SOCK_STREAM;
  if (kind == ListenerKind::kTcp6) family = AF_INET6;
  if (kind == ListenerKind::kUdp4 || kind == ListenerKind::kDns) type = SOCK_DGRAM;
  if (kind == ListenerKind::kUnixStream || kind == ListenerKind::kAbstract) family = AF_UNIX;
  int fd = ::socket(family, type | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error_ = std::string("socket: ") + std::strerror(errno);
    return;
  }
  int rc = -1;
  if (family == AF_INET) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    rc = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  } else if (family == AF_INET6) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    rc = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  } else {
    sockaddr_un a;
    socklen_t len = unix_address(path_or_name, kind == ListenerKind::kAbstract, &a);
    rc = ::bind(fd, reinterpret_cast<sockaddr*>(&a), len);
  }
  if (rc != 0 || (type == SOCK_STREAM && ::listen(fd, 8) != 0)) {
    error_ = std::string("bind/listen: ") + std::strerror(errno);
    ::close(fd);
    return;
  }
  if (family != AF_UNIX) {
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    port_ = family == AF_INET ? ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port)
                              : ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  }
  fd_ = fd;
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
  thread_ = std::thread([this] { serve(); });
}

HostListener::~HostListener() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    ssize_t ignored = ::write(stop_fd_, &one, sizeof one);
    (void)ignored;
    thread_.join();
  }
  if (fd_ >= 0) ::close(fd_);
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

void HostListener::serve() {
  bool datagram = kind_ == ListenerKind::kUdp4 || kind_ == ListenerKind::kDns;
  for (;;) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if (datagram) {
      unsigned char buf[512];
      sockaddr_storage from{};
      socklen_t len = sizeof from;
      ssize_t n = ::recvfrom(fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len);
      if (n <= 0) continue;
      ++served_;
      if (kind_ == ListenerKind::kDns) {
        buf[2] |= 0x80;  // QR: a response with the query's id
        ::sendto(fd_, buf, static_cast<size_t>(n), 0, reinterpret_cast<sockaddr*>(&from), len);
      } else {
        ::sendto(fd_, "pong", 4, 0, reinterpret_cast<sockaddr*>(&from), len);
      }
      continue;
    }
    int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) continue;
    char buf[16];
    pollfd p{conn, POLLIN, 0};
    if (::poll(&p, 1, 10000) > 0 && ::recv(conn, buf, sizeof buf, 0) > 0) {
      ++served_;
      ::send(conn, "pong", 4, MSG_NOSIGNAL);
    }
    ::close(conn);
  }
}

HostDatagramSink::HostDatagramSink(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_un a;
  socklen_t len = unix_address(path, false, &a);
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), len) == 0) {
    fd_ = fd;
  } else if (fd >= 0) {
    ::close(fd);
  }
}

HostDatagramSink::~HostDatagramSink() {
  if (fd_ >= 0) ::close(fd_);
}

int HostDatagramSink::received() {
  int count = 0;
  char buf[64];
  while (::recv(fd_, buf, sizeof buf, MSG_DONTWAIT) > 0) ++count;
  return count;
}

}  // namespace codexd::sandbox::testing
