#include "daemon/network/connection.h"

#include <array>

#include "daemon/network/service_state.h"

namespace codexd::network {

namespace {

constexpr size_t kLingerDiscardBytes = 1024 * 1024;
constexpr int kLingerMaxMs = 2000;

}  // namespace

Connection::Connection(std::shared_ptr<ServiceState> service, std::shared_ptr<OriginState> origin, uint64_t id)
    : service_(std::move(service)),
      origin_(std::move(origin)),
      id_(id),
      strand_(asio::make_strand(service_->io)),
      client_(strand_),
      upstream_(strand_),
      resolver_(strand_),
      deadline_(strand_),
      idle_timer_(strand_),
      decision_event_(strand_, asio::steady_timer::time_point::max()),
      relay_event_(strand_, asio::steady_timer::time_point::max()),
      started_(std::chrono::steady_clock::now()),
      last_activity_(started_) {
  record_.origin = origin_->origin();
}

Connection::~Connection() {
  if (!accepted_) return;
  record_.duration_ms = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_).count());
  origin_->forget(id_, holds_slot_);
  if (holds_slot_) service_->release_slot();
  if (service_->audit) service_->audit(record_);
}

const ProxyOptions& Connection::options() const { return service_->options; }

void Connection::mark_accepted(std::string refusal) {
  started_ = std::chrono::steady_clock::now();
  admission_refusal_ = std::move(refusal);
  if (!admission_refusal_.empty()) {
    record_.reason = admission_refusal_;
    fail(admission_refusal_);
    service_->denied.fetch_add(1, std::memory_order_relaxed);
  }
}

void Connection::arm_deadline(int ms) {
  uint64_t generation = ++deadline_generation_;
  deadline_.expires_after(std::chrono::milliseconds(ms));
  deadline_.async_wait([self = shared_from_this(), generation](error_code ec) {
    if (ec || generation != self->deadline_generation_) return;
    self->timed_out_ = true;
    error_code ignored;
    self->client_.cancel(ignored);
    self->upstream_.cancel(ignored);
    self->resolver_.cancel();
  });
}

void Connection::disarm_deadline() {
  ++deadline_generation_;
  deadline_.cancel();
}

void Connection::fail(std::string error) {
  if (record_.error.empty()) record_.error = std::move(error);
}

void Connection::wake(asio::steady_timer& event) { event.cancel(); }

void Connection::close_all() {
  error_code ignored;
  client_.close(ignored);
  upstream_.close(ignored);
  resolver_.cancel();
  deadline_.cancel();
  idle_timer_.cancel();
  wake(decision_event_);
  wake(relay_event_);
}

void Connection::abort(std::string why) {
  aborted_ = true;
  fail(std::move(why));
  close_all();
}

asio::awaitable<void> Connection::linger_and_close() {
  error_code ec;
  upstream_.close(ec);
  client_.shutdown(tcp::socket::shutdown_send, ec);
  arm_deadline(std::min(options().header_timeout_ms, kLingerMaxMs));
  std::array<char, 16 * 1024> sink;
  size_t discarded = 0;
  while (!ec && client_.is_open() && discarded < kLingerDiscardBytes) {
    discarded += co_await client_.async_read_some(asio::buffer(sink), into(ec));
  }
  close_all();
}

// The decision, with the client watched for going away while a reviewer thinks.
asio::awaitable<std::optional<NetworkVerdict>> Connection::await_verdict() {
  std::weak_ptr<Connection> weak = shared_from_this();
  Strand strand = strand_;
  const uint64_t request_id = service_->decision_ids.fetch_add(1, std::memory_order_relaxed) + 1;
  service_->decider->decide_for(request_id, origin_->origin(), record_.target, [weak, strand](NetworkVerdict verdict) {
    asio::post(strand, [weak, verdict = std::move(verdict)]() mutable {
      if (auto self = weak.lock()) self->on_verdict(std::move(verdict));
    });
  });
  if (!verdict_) watch_client_gone();
  error_code ec;
  while (!verdict_ && !client_gone_ && !aborted_) co_await decision_event_.async_wait(into(ec));
  if (!verdict_ && (client_gone_ || aborted_)) {
    // Either way nobody is left to use an answer: the approval is withdrawn (if this
    // connection alone waited for it), or it would stay pending for a reviewer to answer in
    // vain. The attachment closing (the command ended) can come before the client's FIN is seen.
    record_.error = client_gone_ ? "the client closed the connection while the decision was pending"
                                 : "the command ended while the decision was pending (" + record_.error + ")";
    service_->decider->withdraw(request_id);
  }
  if (!verdict_ || aborted_ || client_gone_) co_return std::nullopt;
  client_.cancel(ec);  // ends watch_client_gone()
  co_return verdict_;
}

void Connection::on_verdict(NetworkVerdict verdict) {
  if (verdict_) return;  // a decider answering twice: the first answer stands
  verdict_ = std::move(verdict);
  wake(decision_event_);
}

// Readable while we wait: either end of stream (the client left) or more data (a request
// body, a pipelined request), which we cannot look past without reading it.
void Connection::watch_client_gone() {
  client_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](error_code ec) {
    if (ec || self->verdict_ || !self->client_.is_open()) return;
    char byte = 0;
    error_code peek;
    self->client_.non_blocking(true, peek);  // only this receive is synchronous: it must not block
    size_t n = self->client_.receive(asio::buffer(&byte, 1), tcp::socket::message_peek, peek);
    if (!peek && n > 0) return;
    if (peek == asio::error::would_block || peek == asio::error::interrupted) {
      self->watch_client_gone();
      return;
    }
    self->client_gone_ = true;
    self->wake(self->decision_event_);
  });
}

}  // namespace codexd::network
