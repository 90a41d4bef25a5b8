// State shared by the proxy service, its attachments and their connections (internal to
// daemon/network). Each connection holds a shared_ptr to it, so the service may go first.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/network/asio.h"
#include "daemon/network/proxy_types.h"

namespace codexd::network {

class Connection;
class ListenerLoop;

struct ServiceState {
  ServiceState(asio::io_context& io_context, ProxyOptions proxy_options, std::shared_ptr<NetworkDecider> network_decider,
               std::function<void(const ConnectionRecord&)> audit_callback)
      : io(io_context),
        options(proxy_options),
        decider(std::move(network_decider)),
        audit(std::move(audit_callback)) {}

  // Takes one of max_connections_total; false when all are taken.
  bool try_acquire_slot();
  void release_slot();
  ProxyCounters counters() const;

  asio::io_context& io;
  const ProxyOptions options;
  const std::shared_ptr<NetworkDecider> decider;
  const std::function<void(const ConnectionRecord&)> audit;
  std::atomic<uint64_t> decision_ids{0};  // NetworkDecider::decide_for request ids
  std::atomic<uint64_t> active{0};
  std::atomic<uint64_t> allowed{0};
  std::atomic<uint64_t> denied{0};
  std::atomic<uint64_t> bytes_up{0};
  std::atomic<uint64_t> bytes_down{0};
};

// One attachment's listeners and live connections. Any thread may close it; the sockets
// themselves are touched only on their own strands.
class OriginState : public std::enable_shared_from_this<OriginState> {
 public:
  OriginState(std::shared_ptr<ServiceState> service, ProxyOrigin origin)
      : service_(std::move(service)), origin_(std::move(origin)) {}

  const ProxyOrigin& origin() const { return origin_; }
  const std::shared_ptr<ServiceState>& service() const { return service_; }

  void add_listener(std::shared_ptr<ListenerLoop> listener);
  // A fresh connection object to accept into (not yet counted).
  std::shared_ptr<Connection> prepare_connection();
  // An accepted connection: counted against the caps and started. Over a cap it is still
  // started, to answer 503 (HTTP) or be closed (SOCKS5), and audited.
  void start(std::shared_ptr<Connection> connection, ListenerKind kind);
  // From ~Connection: `counted` when it held a slot.
  void forget(uint64_t id, bool counted);
  // Closes the listeners and every live connection; `closed` runs once all of them are
  // closed (on an io thread), or right away when there are none.
  void close(std::function<void()> closed);

 private:
  std::string admit_locked();

  const std::shared_ptr<ServiceState> service_;
  const ProxyOrigin origin_;
  std::mutex mutex_;
  bool closed_ = false;
  uint64_t next_id_ = 1;
  size_t counted_ = 0;  // connections holding a slot
  std::vector<std::shared_ptr<ListenerLoop>> listeners_;
  std::map<uint64_t, std::weak_ptr<Connection>> connections_;
};

}  // namespace codexd::network
