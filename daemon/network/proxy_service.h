// codexd's filtering egress proxy. A sandboxed command in "proxy" network mode has only `lo`
// in its network namespace; the sandbox helper listens there on an HTTP proxy port and a
// SOCKS5 port and hands the listening sockets to the daemon, which attaches them here. Every
// connection is decided by the NetworkDecider, resolved by us, checked against the address
// classes (no loopback/private/link-local unless the rule named the host exactly), relayed
// and audited. Everything runs on the given io_context, one strand per connection.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "base/status.h"
#include "daemon/network/asio.h"
#include "daemon/network/proxy_types.h"

namespace codexd::network {

class OriginState;
struct ServiceState;

// RAII: destroying it closes the listeners and every connection of that origin.
class ProxyAttachment {
 public:
  explicit ProxyAttachment(std::shared_ptr<OriginState> state) : state_(std::move(state)) {}
  ~ProxyAttachment() { close(); }
  ProxyAttachment(const ProxyAttachment&) = delete;
  ProxyAttachment& operator=(const ProxyAttachment&) = delete;

  // Closes now (idempotent); `closed` runs, on an io thread, once the listeners and live
  // connections are closed (their audit records follow as their coroutines unwind).
  void close(std::function<void()> closed = {});

 private:
  std::shared_ptr<OriginState> state_;
};

class ProxyService {
 public:
  ProxyService(asio::io_context& io, ProxyOptions options, std::shared_ptr<NetworkDecider> decider,
               std::function<void(const ConnectionRecord&)> audit);
  ~ProxyService();
  ProxyService(const ProxyService&) = delete;
  ProxyService& operator=(const ProxyService&) = delete;

  // Starts accepting on `listeners` (any thread). Fails without accepting anything when one
  // of them is not a TCP socket.
  Result<std::unique_ptr<ProxyAttachment>> attach(ProxyOrigin origin, std::vector<ProxyListener> listeners);

  ProxyCounters counters() const;

 private:
  std::shared_ptr<ServiceState> state_;
};

}  // namespace codexd::network
