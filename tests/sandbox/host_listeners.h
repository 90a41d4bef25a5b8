// Real listeners on the host that answer "pong" (or a DNS reply) so a probe can prove it
// reached the host. Each serves on its own thread until destroyed.
#pragma once

#include <atomic>
#include <string>
#include <thread>

namespace codexd::sandbox::testing {

enum class ListenerKind { kTcp4, kTcp6, kUdp4, kDns, kUnixStream, kAbstract };

class HostListener {
 public:
  // `path_or_name` for kUnixStream (a path) and kAbstract (a name); ignored otherwise.
  HostListener(ListenerKind kind, const std::string& path_or_name = "");
  ~HostListener();
  HostListener(const HostListener&) = delete;
  HostListener& operator=(const HostListener&) = delete;

  bool ready() const { return fd_ >= 0; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  int served() const { return served_.load(); }

 private:
  void serve();

  ListenerKind kind_;
  int fd_ = -1;
  int stop_fd_ = -1;
  int port_ = 0;
  std::string error_;
  std::atomic<int> served_{0};
  std::thread thread_;
};

// A bound Unix datagram socket on the host; received() drains what arrived (no waiting:
// a probe's sendto/sendmsg has completed by the time the probe exits).
class HostDatagramSink {
 public:
  explicit HostDatagramSink(const std::string& path);
  ~HostDatagramSink();
  bool ready() const { return fd_ >= 0; }
  int received();

 private:
  int fd_ = -1;
};

}  // namespace codexd::sandbox::testing
