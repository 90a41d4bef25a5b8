// A tiny HTTP/1.1 origin for tests of the network proxy: listens on a loopback address of
// its own choosing (127.0.0.2 by default, so that NO_PROXY's 127.0.0.1 does not apply and a
// command reaches it only through the proxy), answers every request with
// "hello from the origin\n" and closes. Counts the requests it answered.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fcntl.h>

#include <atomic>
#include <string>
#include <thread>

namespace codexd::testing {

class LoopbackOrigin {
 public:
  static constexpr const char* kBody = "hello from the origin\n";

  explicit LoopbackOrigin(const char* address = "127.0.0.2") : address_(address) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    ::inet_pton(AF_INET, address, &a.sin_addr);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0 || ::pipe2(stop_, O_CLOEXEC) != 0) {
      return;
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~LoopbackOrigin() {
    if (thread_.joinable()) {
      ::close(stop_[1]);
      thread_.join();
      ::close(stop_[0]);
    }
    if (fd_ >= 0) ::close(fd_);
  }
  LoopbackOrigin(const LoopbackOrigin&) = delete;
  LoopbackOrigin& operator=(const LoopbackOrigin&) = delete;

  bool ready() const { return port_ != 0; }
  int port() const { return port_; }
  std::string url(const std::string& path = "/") const {
    return "http://" + address_ + ":" + std::to_string(port_) + path;
  }
  int served() const { return served_.load(); }

 private:
  void serve() {
    for (;;) {
      pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0 || fds[1].revents != 0) return;
      int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn < 0) continue;
      std::string request;
      char buf[4096];
      pollfd p{conn, POLLIN, 0};
      while (request.find("\r\n\r\n") == std::string::npos && ::poll(&p, 1, 10000) > 0) {
        ssize_t n = ::recv(conn, buf, sizeof buf, 0);
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      if (request.find("\r\n\r\n") != std::string::npos) {
        std::string body = kBody;
        std::string response = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
                               std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
        // Counted before the answer leaves: a test that reads served() as soon as its client has
        // the answer must see it (counted after, a loaded machine showed 0 for a served request).
        ++served_;
        ::send(conn, response.data(), response.size(), MSG_NOSIGNAL);
      }
      ::close(conn);
    }
  }

  std::string address_;
  int fd_ = -1;
  int port_ = 0;
  int stop_[2] = {-1, -1};
  std::atomic<int> served_{0};
  std::thread thread_;
};

}  // namespace codexd::testing
