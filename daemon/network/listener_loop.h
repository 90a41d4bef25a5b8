// Accepts on one adopted listening socket, each client into a Connection of its origin.
#pragma once

#include <functional>
#include <memory>

#include "base/status.h"
#include "daemon/network/asio.h"
#include "daemon/network/proxy_types.h"

namespace codexd::network {

class OriginState;

class ListenerLoop : public std::enable_shared_from_this<ListenerLoop> {
 public:
  // Takes ownership of the listening fd (IPv4 or IPv6, any network namespace).
  static Result<std::shared_ptr<ListenerLoop>> adopt(asio::io_context& io, ProxyListener listener,
                                                     std::weak_ptr<OriginState> origin);
  ListenerLoop(asio::io_context& io, ListenerKind kind, std::weak_ptr<OriginState> origin);

  void start();
  // Closes the socket on its strand, then runs `closed`.
  void close(std::function<void()> closed);

 private:
  void accept_next();
  void retry_later();

  Strand strand_;
  tcp::acceptor acceptor_;
  asio::steady_timer backoff_;
  const ListenerKind kind_;
  const std::weak_ptr<OriginState> origin_;
};

}  // namespace codexd::network
