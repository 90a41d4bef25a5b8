// Connection::relay: both directions of an established connection, each a loop around a
// BytePump (splice through a pipe on Linux) driven by Asio readiness waits, so the bytes
// never pass through our buffers. Half-close is passed on; any error ends both directions.
#include <memory>

#include "daemon/network/connection.h"
#include "daemon/network/service_state.h"
#include "platform/posix/byte_pump.h"

namespace codexd::network {

namespace {

// Steps in a row before giving the strand's other handlers (the idle clock, an abort, the
// other direction) a turn.
constexpr int kStepsPerTurn = 16;

}  // namespace

void Connection::count_up(uint64_t bytes) {
  record_.bytes_up += bytes;
  service_->bytes_up.fetch_add(bytes, std::memory_order_relaxed);
}

void Connection::count_down(uint64_t bytes) {
  record_.bytes_down += bytes;
  service_->bytes_down.fetch_add(bytes, std::memory_order_relaxed);
}

void Connection::start_idle_clock() {
  touch();
  idle_timer_.expires_after(std::chrono::milliseconds(options().idle_timeout_ms));
  idle_timer_.async_wait([self = shared_from_this()](error_code ec) { self->on_idle_check(ec); });
}

void Connection::on_idle_check(error_code ec) {
  if (ec || relay_done_ || !client_.is_open()) return;
  auto idle_for = std::chrono::milliseconds(options().idle_timeout_ms);
  if (std::chrono::steady_clock::now() - last_activity_ >= idle_for) {
    fail("idle for " + std::to_string(options().idle_timeout_ms) + " ms");
    close_all();
    return;
  }
  idle_timer_.expires_at(last_activity_ + idle_for);
  idle_timer_.async_wait([self = shared_from_this()](error_code next) { self->on_idle_check(next); });
}

asio::awaitable<void> Connection::relay(bool both_ways) {
  error_code ec;
  client_.native_non_blocking(true, ec);
  upstream_.native_non_blocking(true, ec);
  if (ec) {
    fail("relay: " + ec.message());
    close_all();
    co_return;
  }
  start_idle_clock();
  up_done_ = !both_ways;
  if (both_ways) {
    auto self = shared_from_this();
    asio::co_spawn(strand_, pump(true), [self](std::exception_ptr) {
      self->up_done_ = true;
      self->wake(self->relay_event_);
    });
  }
  co_await pump(false);
  while (!up_done_) co_await relay_event_.async_wait(into(ec));
  relay_done_ = true;
  close_all();
}

// One direction: up = client -> upstream.
asio::awaitable<void> Connection::pump(bool up) {
  tcp::socket& from = up ? client_ : upstream_;
  tcp::socket& to = up ? upstream_ : client_;
  auto made = posix::make_byte_pump(options().relay_buffer_bytes,
                                    options().relay_splice ? posix::PumpKind::kBest : posix::PumpKind::kCopy);
  if (!made.ok()) {
    fail("relay: " + made.status().message());
    close_all();
    co_return;
  }
  posix::BytePump& pump = **made;
  bool end_of_stream = false;
  int steps = 0;
  for (;;) {
    if (!from.is_open() || !to.is_open()) co_return;
    size_t moved = 0;
    bool progress = false;
    if (!end_of_stream && pump.buffered() < pump.capacity()) {
      auto step = pump.fill(from.native_handle());
      if (!step.ok()) {
        fail(std::string(up ? "client" : "upstream") + ": " + step.status().message());
        close_all();
        co_return;
      }
      end_of_stream = step->end_of_stream;
      progress = step->bytes > 0;
    }
    if (pump.buffered() > 0) {
      auto step = pump.drain(to.native_handle());
      if (!step.ok()) {
        fail(std::string(up ? "upstream" : "client") + ": " + step.status().message());
        close_all();
        co_return;
      }
      moved = step->bytes;
    }
    if (moved > 0) up ? count_up(moved) : count_down(moved);
    error_code ec;
    if (progress || moved > 0) {
      touch();
      if (++steps % kStepsPerTurn == 0) co_await asio::post(strand_, asio::use_awaitable);
      continue;
    }
    if (end_of_stream && pump.buffered() == 0) {
      to.shutdown(tcp::socket::shutdown_send, ec);
      co_return;
    }
    if (pump.buffered() > 0) {
      co_await to.async_wait(tcp::socket::wait_write, into(ec));
    } else {
      co_await from.async_wait(tcp::socket::wait_read, into(ec));
    }
    if (ec) co_return;  // closed: the other direction failed, idle timeout or abort
  }
}

}  // namespace codexd::network
