#include "tests/network/proxy_fixture.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "daemon/network/loopback_listener.h"

namespace codexd::network::testing {

namespace http = boost::beast::http;

void TableDecider::set(const std::string& host, NetworkVerdict verdict) {
  std::lock_guard lock(mutex_);
  table_[host] = std::move(verdict);
}

void TableDecider::hold(bool on) {
  std::lock_guard lock(mutex_);
  hold_ = on;
}

bool TableDecider::wait_pending(size_t count) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, kWait, [&] { return held_.size() >= count; });
}

void TableDecider::release() {
  std::vector<std::pair<std::function<void(NetworkVerdict)>, NetworkVerdict>> held;
  {
    std::lock_guard lock(mutex_);
    held.swap(held_);
  }
  for (auto& [done, verdict] : held) done(verdict);
}

size_t TableDecider::withdrawn() const {
  std::lock_guard lock(mutex_);
  return withdrawn_;
}

void TableDecider::withdraw(uint64_t) {
  std::lock_guard lock(mutex_);
  ++withdrawn_;
}

std::vector<ConnectTarget> TableDecider::asked() const {
  std::lock_guard lock(mutex_);
  return asked_;
}

NetworkVerdict TableDecider::lookup_locked(const std::string& host) const {
  auto found = table_.find(host);
  if (found != table_.end()) return found->second;
  return NetworkVerdict{false, "not in the test table", false, false};
}

void TableDecider::decide(const ProxyOrigin&, const ConnectTarget& target, std::function<void(NetworkVerdict)> done) {
  std::unique_lock lock(mutex_);
  asked_.push_back(target);
  NetworkVerdict verdict = lookup_locked(target.host);
  if (hold_) {
    held_.emplace_back(std::move(done), std::move(verdict));
    changed_.notify_all();
    return;
  }
  lock.unlock();
  done(std::move(verdict));
}

void AuditLog::add(const ConnectionRecord& record) {
  std::lock_guard lock(mutex_);
  records_.push_back(record);
  changed_.notify_all();
}

std::vector<ConnectionRecord> AuditLog::wait_for(size_t count) {
  std::unique_lock lock(mutex_);
  if (!changed_.wait_for(lock, kWait, [&] { return records_.size() >= count; })) return {};
  return records_;
}

TestServer::TestServer(Handler serve) : acceptor_(io_), serve_(std::move(serve)) {
  acceptor_.open(tcp::v4());
  acceptor_.bind(tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  acceptor_.listen();
  port_ = acceptor_.local_endpoint().port();
  asio::co_spawn(io_, accept_loop(), asio::detached);
  thread_ = std::thread([this] { io_.run(); });
}

TestServer::~TestServer() {
  io_.stop();
  thread_.join();
}

asio::awaitable<void> TestServer::accept_loop() {
  for (;;) {
    error_code ec;
    tcp::socket socket = co_await acceptor_.async_accept(into(ec));
    if (ec) co_return;
    asio::co_spawn(io_, serve_(std::move(socket)), asio::detached);
  }
}

HttpOrigin::HttpOrigin() {
  server_ = std::make_unique<TestServer>([this](tcp::socket socket) { return serve(std::move(socket)); });
}

std::vector<OriginRequest> HttpOrigin::wait_for(size_t count) {
  std::unique_lock lock(mutex_);
  if (!changed_.wait_for(lock, kWait, [&] { return requests_.size() >= count; })) return {};
  return requests_;
}

asio::awaitable<void> HttpOrigin::serve(tcp::socket socket) {
  boost::beast::flat_buffer buffer;
  http::request<http::string_body> request;
  error_code ec;
  co_await http::async_read(socket, buffer, request, into(ec));
  if (ec) co_return;
  OriginRequest seen{std::string(request.method_string()), std::string(request.target()),
                     std::string(request[http::field::host]),
                     std::string(request[http::field::proxy_authorization]), request.body(), 0};
  http::response<http::string_body> response{http::status::ok, 11};
  response.set(http::field::content_type, "text/plain");
  const std::string prefix = "/bytes/";
  if (seen.target.rfind(prefix, 0) == 0) {
    response.body() = std::string(std::stoul(seen.target.substr(prefix.size())), 'x');
  } else {
    response.body() = "origin saw " + seen.method + " " + seen.target;
  }
  response.keep_alive(false);
  response.prepare_payload();
  co_await http::async_write(socket, response, into(ec));
  socket.shutdown(tcp::socket::shutdown_send, ec);
  // Whatever else arrives before the proxy closes was forwarded past the first request.
  seen.bytes_after_request = buffer.size();
  std::array<char, 4096> sink;
  while (!ec) seen.bytes_after_request += co_await socket.async_read_some(asio::buffer(sink), into(ec));
  std::lock_guard lock(mutex_);
  requests_.push_back(std::move(seen));
  changed_.notify_all();
}

std::unique_ptr<TestServer> make_echo_server() {
  return std::make_unique<TestServer>([](tcp::socket socket) -> asio::awaitable<void> {
    std::array<char, 16 * 1024> data;
    error_code ec;
    for (;;) {
      size_t n = co_await socket.async_read_some(asio::buffer(data), into(ec));
      if (ec) break;
      co_await asio::async_write(socket, asio::buffer(data.data(), n), into(ec));
      if (ec) break;
    }
    socket.shutdown(tcp::socket::shutdown_send, ec);
  });
}

UniqueFd connect_loopback(uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  timeval timeout{10, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return UniqueFd();
  return fd;
}

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string read_to_end(int fd) {
  std::string out;
  std::array<char, 16 * 1024> buffer;
  for (;;) {
    ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n <= 0) return out;
    out.append(buffer.data(), static_cast<size_t>(n));
  }
}

std::string read_exactly(int fd, size_t size) {
  std::string out(size, '\0');
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::recv(fd, out.data() + got, size - got, 0);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return out;
}

std::string read_until(int fd, std::string_view marker) {
  std::string out;
  char c;
  while (out.find(marker) == std::string::npos && ::recv(fd, &c, 1, 0) == 1) out.push_back(c);
  return out;
}

bool nothing_to_read(int fd) {
  pollfd entry{fd, POLLIN, 0};
  return ::poll(&entry, 1, 0) == 0;
}

CommandOutput run_command(const std::string& command) {
  CommandOutput result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

void ProxyFixture::SetUp() {
  work_.emplace(io_.get_executor());
  for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  service_ = std::make_unique<ProxyService>(io_, options(), decider_,
                                            [this](const ConnectionRecord& record) { audit_.add(record); });
  auto http_listener = listen_on_loopback();
  auto socks_listener = listen_on_loopback();
  ASSERT_TRUE(http_listener.ok() && socks_listener.ok());
  http_port_ = http_listener->port;
  socks_port_ = socks_listener->port;
  std::vector<ProxyListener> listeners;
  listeners.push_back(ProxyListener{std::move(http_listener->fd), ListenerKind::kHttp});
  listeners.push_back(ProxyListener{std::move(socks_listener->fd), ListenerKind::kSocks5});
  auto attached = service_->attach(ProxyOrigin{::getuid(), "agent-1", 7, "curl example"}, std::move(listeners));
  ASSERT_TRUE(attached.ok()) << attached.status().to_string();
  attachment_ = std::move(attached).value();
  decider_->set("127.0.0.1", allow());
  origin_ = std::make_unique<HttpOrigin>();
}

void ProxyFixture::TearDown() {
  decider_->release();
  attachment_.reset();
  work_.reset();
  for (auto& thread : threads_) thread.join();
  service_.reset();
}

NetworkVerdict ProxyFixture::allow(bool non_public, bool limited) {
  return NetworkVerdict{true, "allowed by the test table", non_public, limited};
}

NetworkVerdict ProxyFixture::deny(std::string reason) { return NetworkVerdict{false, std::move(reason), false, false}; }

std::string ProxyFixture::http_get(uint16_t proxy_port, const std::string& url) {
  UniqueFd client = connect_loopback(proxy_port);
  if (!client) return "connect failed";
  send_all(client.get(), "GET " + url + " HTTP/1.1\r\nHost: ignored\r\nProxy-Authorization: Basic c2VjcmV0\r\n\r\n");
  return read_to_end(client.get());
}

}  // namespace codexd::network::testing
