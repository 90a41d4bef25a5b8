#include "daemon/network/loopback_listener.h"

#include "daemon/network/asio.h"

namespace codexd::network {

Result<LoopbackListener> listen_on_loopback(int backlog) {
  asio::io_context io;
  tcp::acceptor acceptor(io);
  error_code ec;
  acceptor.open(tcp::v4(), ec);
  if (!ec) acceptor.bind(tcp::endpoint(asio::ip::address_v4::loopback(), 0), ec);
  if (!ec) acceptor.listen(backlog, ec);
  if (ec) return Internal("loopback listener: " + ec.message());
  uint16_t port = acceptor.local_endpoint(ec).port();
  int fd = acceptor.release(ec);
  if (ec) return Internal("loopback listener: " + ec.message());
  return LoopbackListener{UniqueFd(fd), port};
}

}  // namespace codexd::network
