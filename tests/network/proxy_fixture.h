// What the proxy tests drive the real ProxyService with: a table decider that can hold its
// answers (an approval), an audit log to wait on, loopback origin servers (HTTP and echo),
// and blocking loopback clients. Nothing here is the thing under test.
#pragma once

#include <condition_variable>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/unique_fd.h"
#include "daemon/network/asio.h"
#include "daemon/network/proxy_service.h"

namespace codexd::network::testing {

inline constexpr auto kWait = std::chrono::seconds(10);

// Answers from a table by host; unknown hosts are denied. With hold(true) the answers wait
// until release(), like a reviewer.
class TableDecider : public NetworkDecider {
 public:
  void set(const std::string& host, NetworkVerdict verdict);
  void hold(bool on);
  // Waits until `count` decisions are being held.
  bool wait_pending(size_t count);
  // Answers every held decision from the table.
  void release();
  std::vector<ConnectTarget> asked() const;
  // How many decisions their connections withdrew.
  size_t withdrawn() const;

  void decide(const ProxyOrigin& origin, const ConnectTarget& target, std::function<void(NetworkVerdict)> done) override;
  void withdraw(uint64_t request_id) override;

 private:
  NetworkVerdict lookup_locked(const std::string& host) const;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, NetworkVerdict> table_;
  bool hold_ = false;
  std::vector<std::pair<std::function<void(NetworkVerdict)>, NetworkVerdict>> held_;
  std::vector<ConnectTarget> asked_;
  size_t withdrawn_ = 0;
};

class AuditLog {
 public:
  void add(const ConnectionRecord& record);
  // The records once there are at least `count` (empty on timeout).
  std::vector<ConnectionRecord> wait_for(size_t count);

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<ConnectionRecord> records_;
};

// One Asio thread serving loopback connections with `serve` (a coroutine per connection).
class TestServer {
 public:
  using Handler = std::function<asio::awaitable<void>(tcp::socket)>;
  explicit TestServer(Handler serve);
  ~TestServer();
  uint16_t port() const { return port_; }

 private:
  asio::awaitable<void> accept_loop();

  asio::io_context io_;
  tcp::acceptor acceptor_;
  Handler serve_;
  uint16_t port_ = 0;
  std::thread thread_;
};

// What the HTTP origin saw: one entry per connection, after it closed.
struct OriginRequest {
  std::string method;
  std::string target;
  std::string host_header;
  std::string proxy_authorization;  // must never arrive
  std::string body;
  size_t bytes_after_request = 0;  // anything the proxy forwarded past the first request
};

// An HTTP/1.1 origin: answers "origin saw METHOD TARGET" (or `/bytes/N`: N bytes of 'x'),
// closes, and records what it got.
class HttpOrigin {
 public:
  HttpOrigin();
  uint16_t port() const { return server_->port(); }
  std::vector<OriginRequest> wait_for(size_t count);

 private:
  asio::awaitable<void> serve(tcp::socket socket);

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<OriginRequest> requests_;
  std::unique_ptr<TestServer> server_;
};

// Echoes every byte back until end of stream, then closes.
std::unique_ptr<TestServer> make_echo_server();

// A blocking client socket connected to 127.0.0.1:port, with 10 s receive/send timeouts.
UniqueFd connect_loopback(uint16_t port);
bool send_all(int fd, std::string_view data);
// Everything until end of stream, an error or the timeout.
std::string read_to_end(int fd);
// Exactly `size` bytes (fewer on end of stream / error).
std::string read_exactly(int fd, size_t size);
// Reads until `marker` has arrived (the text up to and including it, or what came).
std::string read_until(int fd, std::string_view marker);
// True when nothing is readable right now (no data, no end of stream).
bool nothing_to_read(int fd);

struct CommandOutput {
  int exit_code = -1;
  std::string output;
};
// Runs a shell command line, returns its stdout.
CommandOutput run_command(const std::string& command);

// The engine under test, on two io threads, attached to a loopback HTTP and SOCKS5 port.
class ProxyFixture : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  virtual ProxyOptions options() const { return ProxyOptions{}; }

  // The decider allows 127.0.0.1 with allow_non_public (the rule names it exactly).
  static NetworkVerdict allow(bool non_public = true, bool limited = false);
  static NetworkVerdict deny(std::string reason);
  std::string http_get(uint16_t proxy_port, const std::string& url);

  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::vector<std::thread> threads_;
  std::shared_ptr<TableDecider> decider_ = std::make_shared<TableDecider>();
  AuditLog audit_;
  std::unique_ptr<ProxyService> service_;
  std::unique_ptr<ProxyAttachment> attachment_;
  uint16_t http_port_ = 0;
  uint16_t socks_port_ = 0;
  std::unique_ptr<HttpOrigin> origin_;
};

}  // namespace codexd::network::testing
