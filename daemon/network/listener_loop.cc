#include "daemon/network/listener_loop.h"

#include "daemon/network/connection.h"
#include "daemon/network/service_state.h"

namespace codexd::network {

namespace {

// After an accept error other than the listener closing (EMFILE, ENOBUFS): try again soon
// instead of spinning.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);

}  // namespace

Result<std::shared_ptr<ListenerLoop>> ListenerLoop::adopt(asio::io_context& io, ProxyListener listener,
                                                          std::weak_ptr<OriginState> origin) {
  if (!listener.fd.valid()) return InvalidArgument("proxy listener: no file descriptor");
  auto loop = std::make_shared<ListenerLoop>(io, listener.kind, std::move(origin));
  error_code ec;
  loop->acceptor_.assign(tcp::v4(), listener.fd.get(), ec);
  if (ec) return InvalidArgument("proxy listener: " + ec.message());
  listener.fd.release();  // the acceptor owns it now
  tcp::endpoint local = loop->acceptor_.local_endpoint(ec);
  if (!ec && local.protocol() != tcp::v4()) {
    int fd = loop->acceptor_.release(ec);
    if (!ec) loop->acceptor_.assign(tcp::v6(), fd, ec);
  }
  if (ec) return InvalidArgument("proxy listener: not a TCP socket: " + ec.message());
  return loop;
}

ListenerLoop::ListenerLoop(asio::io_context& io, ListenerKind kind, std::weak_ptr<OriginState> origin)
    : strand_(asio::make_strand(io)), acceptor_(strand_), backoff_(strand_), kind_(kind), origin_(std::move(origin)) {}

void ListenerLoop::start() {
  asio::post(strand_, [self = shared_from_this()] { self->accept_next(); });
}

void ListenerLoop::accept_next() {
  auto origin = origin_.lock();
  if (!origin || !acceptor_.is_open()) return;
  std::shared_ptr<Connection> connection = origin->prepare_connection();
  acceptor_.async_accept(connection->client(), [self = shared_from_this(), connection](error_code ec) {
    if (ec == asio::error::operation_aborted || !self->acceptor_.is_open()) return;
    if (ec) {
      self->retry_later();
      return;
    }
    if (auto origin = self->origin_.lock()) origin->start(connection, self->kind_);
    self->accept_next();
  });
}

void ListenerLoop::retry_later() {
  backoff_.expires_after(kAcceptBackoff);
  backoff_.async_wait([self = shared_from_this()](error_code ec) {
    if (!ec) self->accept_next();
  });
}

void ListenerLoop::close(std::function<void()> closed) {
  asio::post(strand_, [self = shared_from_this(), closed = std::move(closed)] {
    error_code ignored;
    self->acceptor_.close(ignored);
    self->backoff_.cancel();
    closed();
  });
}

}  // namespace codexd::network
