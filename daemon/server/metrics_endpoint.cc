#include "daemon/server/metrics_endpoint.h"

#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <optional>
#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <spdlog/spdlog.h>
#include <thread>
#include <vector>

#include "daemon/server/io_thread.h"

namespace codexd::server {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using Socket = asio::generic::stream_protocol::socket;

constexpr size_t kMaxConnections = 16;
constexpr size_t kHeaderLimit = 8 * 1024;
constexpr auto kRequestTimeout = std::chrono::seconds(10);

}  // namespace

class Connection;

// Everything but `io` is touched on the endpoint's thread only (and by the destructor once
// that thread has ended).
struct MetricsEndpoint::Impl : std::enable_shared_from_this<MetricsEndpoint::Impl> {
  // Declared before `io`, so destroyed after it: a connection that a handler still held when
  // `io` goes (none should, after close_all) leaves `live` from a map that still exists.
  std::map<Connection*, std::weak_ptr<Connection>> live;
  asio::io_context io;
  std::optional<asio::basic_socket_acceptor<asio::generic::stream_protocol>> acceptor;
  Gather gather;
  std::string description;
  std::string unix_path;  // removed at the end
  std::thread thread;

  void accept();
  void close_all();
};

// One client connection: requests one at a time (keep-alive), each answered from a fresh
// gather. Lives as long as an operation of its own is pending.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(MetricsEndpoint::Impl& endpoint, Socket socket)
      : endpoint_(endpoint), socket_(std::move(socket)), timer_(socket_.get_executor()) {}
  ~Connection() { endpoint_.live.erase(this); }

  void read_request() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(0);
    arm_timer();
    http::async_read(socket_, buffer_, *parser_, [self = shared_from_this()](boost::system::error_code ec, size_t) {
      self->timer_.cancel();
      if (ec) return self->close();  // gone, timed out, or not HTTP: nothing to answer
      self->answer(self->parser_->release());
    });
  }

 private:
  void arm_timer() {
    timer_.expires_after(kRequestTimeout);
    timer_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
      if (ec) return;
      if (auto self = weak.lock()) self->close();
    });
  }

  void answer(http::request<http::empty_body> request) {
    const bool keep_alive = request.keep_alive();
    const unsigned version = request.version();
    if (request.target() != "/metrics") return respond(http::status::not_found, "try /metrics\n", version, keep_alive);
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      return respond(http::status::method_not_allowed, "GET or HEAD\n", version, keep_alive);
    }
    const bool head = request.method() == http::verb::head;
    // The gather answers from another thread, maybe after the endpoint is gone: it holds
    // nothing of ours but weak references. This connection holds itself until the answer
    // comes (or close() at shutdown lets go).
    waiting_for_figures_ = shared_from_this();
    endpoint_.gather([endpoint = endpoint_.weak_from_this(), weak = weak_from_this(), version, keep_alive,
                      head](std::string text) {
      auto alive = endpoint.lock();
      if (!alive) return;
      asio::post(alive->io, [weak, text = std::move(text), version, keep_alive, head]() mutable {
        auto self = weak.lock();
        if (!self || !self->waiting_for_figures_) return;
        self->waiting_for_figures_.reset();
        self->respond(http::status::ok, head ? std::string() : std::move(text), version, keep_alive,
                      "text/plain; version=0.0.4; charset=utf-8");
      });
    });
  }

  void respond(http::status status, std::string body, unsigned version, bool keep_alive,
               const char* content_type = "text/plain; charset=utf-8") {
    auto response = std::make_shared<http::response<http::string_body>>(status, version);
    response->set(http::field::content_type, content_type);
    response->set(http::field::server, "codexd");
    response->body() = std::move(body);
    response->keep_alive(keep_alive);
    response->prepare_payload();
    arm_timer();
    http::async_write(socket_, *response, [self = shared_from_this(), response](boost::system::error_code ec, size_t) {
      self->timer_.cancel();
      if (ec || !response->keep_alive()) return self->close();
      self->read_request();
    });
  }

 public:
  void close() {
    boost::system::error_code ignored;
    timer_.cancel();
    socket_.shutdown(Socket::shutdown_both, ignored);
    socket_.close(ignored);
    waiting_for_figures_.reset();
  }

 private:
  MetricsEndpoint::Impl& endpoint_;
  std::shared_ptr<Connection> waiting_for_figures_;
  Socket socket_;
  asio::steady_timer timer_;
  boost::beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> parser_;
};

void MetricsEndpoint::Impl::accept() {
  acceptor->async_accept([this](boost::system::error_code ec, Socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) {
      if (live.size() >= kMaxConnections) {
        boost::system::error_code ignored;
        socket.close(ignored);  // a scraper needs one; a flood gets closed sockets
      } else {
        auto connection = std::make_shared<Connection>(*this, std::move(socket));
        live.emplace(connection.get(), connection);
        connection->read_request();
      }
    }
    accept();
  });
}

void MetricsEndpoint::Impl::close_all() {
  boost::system::error_code ignored;
  if (acceptor) acceptor->close(ignored);
  std::vector<std::shared_ptr<Connection>> open;
  for (auto& [raw, weak] : live) {
    if (auto connection = weak.lock()) open.push_back(std::move(connection));
  }
  for (auto& connection : open) connection->close();
}

Result<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::start(const config::MetricsAddress& address, Gather gather) {
  auto impl = std::make_shared<Impl>();
  impl->gather = std::move(gather);
  try {
    if (address.tcp) {
      asio::ip::tcp::endpoint endpoint(asio::ip::make_address(address.host), address.port);
      impl->acceptor.emplace(impl->io, asio::generic::stream_protocol(endpoint.protocol()));
      impl->acceptor->set_option(asio::socket_base::reuse_address(true));
      impl->acceptor->bind(asio::generic::stream_protocol::endpoint(endpoint.data(), endpoint.size()));
      impl->description = "tcp:" + (address.host == "::1" ? std::string("[::1]") : address.host) + ":" +
                          std::to_string(address.port);
    } else {
      ::unlink(address.path.c_str());  // a stale socket of an earlier run
      asio::local::stream_protocol::endpoint endpoint(address.path);
      impl->acceptor.emplace(impl->io, asio::generic::stream_protocol(asio::local::stream_protocol()));
      impl->acceptor->bind(asio::generic::stream_protocol::endpoint(endpoint.data(), endpoint.size()));
      impl->unix_path = address.path;
      // Owner only. Nobody can connect before listen(), so the mode is right from the first
      // connection on (a umask would be process-wide, with other threads running).
      if (::chmod(address.path.c_str(), 0600) != 0) throw std::runtime_error("chmod 0600 failed");
      impl->description = "unix:" + address.path;
    }
    impl->acceptor->listen(asio::socket_base::max_listen_connections);
  } catch (const std::exception& e) {
    return Unavailable("metrics endpoint " + (address.tcp ? address.host + ":" + std::to_string(address.port) : address.path) +
                       ": " + e.what());
  }
  impl->accept();
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { run_until_stopped(raw->io, "metrics"); });
  return std::unique_ptr<MetricsEndpoint>(new MetricsEndpoint(std::move(impl)));
}

MetricsEndpoint::MetricsEndpoint(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

MetricsEndpoint::~MetricsEndpoint() {
  // Closed on the endpoint's own thread; then its last handlers (all aborted) run there too,
  // and every connection is gone before the thread ends.
  asio::post(impl_->io, [impl = impl_.get()] { impl->close_all(); });
  if (impl_->thread.joinable()) impl_->thread.join();
  if (!impl_->unix_path.empty()) ::unlink(impl_->unix_path.c_str());
}

const std::string& MetricsEndpoint::description() const { return impl_->description; }

}  // namespace codexd::server
