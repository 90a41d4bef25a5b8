#include "daemon/network/service_state.h"

#include "daemon/network/connection.h"
#include "daemon/network/listener_loop.h"
#include "daemon/network/sessions.h"

namespace codexd::network {

namespace {

// Parameters by value: they live in the coroutine frame.
asio::awaitable<void> run_connection(std::shared_ptr<Connection> connection, ListenerKind kind, std::string refusal) {
  connection->mark_accepted(std::move(refusal));
  if (kind == ListenerKind::kHttp) {
    co_await serve_http(std::move(connection));
  } else {
    co_await serve_socks5(std::move(connection));
  }
}

}  // namespace

bool ServiceState::try_acquire_slot() {
  uint64_t before = active.fetch_add(1, std::memory_order_acq_rel);
  if (before < options.max_connections_total) return true;
  active.fetch_sub(1, std::memory_order_acq_rel);
  return false;
}

void ServiceState::release_slot() { active.fetch_sub(1, std::memory_order_acq_rel); }

ProxyCounters ServiceState::counters() const {
  return ProxyCounters{active.load(), allowed.load(), denied.load(), bytes_up.load(), bytes_down.load()};
}

void OriginState::add_listener(std::shared_ptr<ListenerLoop> listener) {
  std::lock_guard lock(mutex_);
  listeners_.push_back(std::move(listener));
}

std::shared_ptr<Connection> OriginState::prepare_connection() {
  uint64_t id;
  {
    std::lock_guard lock(mutex_);
    id = next_id_++;
  }
  return std::make_shared<Connection>(service_, shared_from_this(), id);
}

// Under mutex_: "" and a slot taken, or why not.
std::string OriginState::admit_locked() {
  if (counted_ >= service_->options.max_connections_per_origin) {
    return "connection limit reached (" + std::to_string(service_->options.max_connections_per_origin) +
           " at once for this command)";
  }
  if (!service_->try_acquire_slot()) {
    return "connection limit reached (" + std::to_string(service_->options.max_connections_total) +
           " at once for the whole proxy)";
  }
  ++counted_;
  return "";
}

void OriginState::start(std::shared_ptr<Connection> connection, ListenerKind kind) {
  std::string refusal;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;  // the socket closes with `connection`
    refusal = admit_locked();
    connection->mark_registered(refusal.empty());
    connections_[connection->id()] = connection;
  }
  Strand strand = connection->strand();
  asio::co_spawn(strand, run_connection(std::move(connection), kind, std::move(refusal)), asio::detached);
}

void OriginState::forget(uint64_t id, bool counted) {
  std::lock_guard lock(mutex_);
  connections_.erase(id);
  if (counted) --counted_;
}

void OriginState::close(std::function<void()> closed) {
  std::vector<std::shared_ptr<ListenerLoop>> listeners;
  std::vector<std::shared_ptr<Connection>> live;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    listeners.swap(listeners_);
    for (auto& [id, weak] : connections_) {
      if (auto connection = weak.lock()) live.push_back(std::move(connection));
    }
  }
  auto remaining = std::make_shared<std::atomic<size_t>>(listeners.size() + live.size() + 1);
  auto one_done = [remaining, closed = std::move(closed)] {
    if (remaining->fetch_sub(1) == 1 && closed) closed();
  };
  for (auto& listener : listeners) listener->close(one_done);
  for (auto& connection : live) {
    asio::post(connection->strand(), [connection, one_done] {
      connection->abort("the proxy attachment was closed");
      one_done();
    });
  }
  one_done();
}

}  // namespace codexd::network
