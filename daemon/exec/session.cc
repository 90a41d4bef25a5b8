#include "daemon/exec/session.h"

#include <signal.h>

#include <algorithm>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "base/utf8.h"
#include "daemon/exec/exit_status.h"
#include "platform/posix/pty.h"

namespace codexd::exec {
namespace {

namespace asio = boost::asio;

// Codex: after the exit, output is still collected for at most 50 ms by a waiting call...
constexpr auto kPostExitCollectCap = std::chrono::milliseconds(50);
// ...and the stream keeps reading 100 ms of trailing output before it is considered drained.
constexpr auto kTrailingOutputGrace = std::chrono::milliseconds(100);
constexpr size_t kReadChunk = 64 * 1024;
// A Poll answers once the output has paused this long (or kBurstCap after its first byte): a
// command that writes 1 MiB at once reaches us in pipe-sized pieces, and one Poll should
// return all of them, not the first piece.
constexpr auto kBurstQuiet = std::chrono::milliseconds(5);
constexpr auto kBurstCap = std::chrono::milliseconds(100);

}  // namespace

std::shared_ptr<Session> Session::start(asio::io_context& io, SessionMetadata metadata, posix::SpawnedProcess process,
                                        SessionLimits limits, std::unique_ptr<limits::ResourceGroup> group) {
  std::shared_ptr<Session> session(
      new Session(io, std::move(metadata), std::move(process), limits, std::move(group)));
  session->begin();
  return session;
}

std::shared_ptr<Session> Session::start_with_shim(asio::io_context& io, SessionMetadata metadata,
                                                  std::shared_ptr<ShimLink> link, bool input_open, SessionLimits limits,
                                                  std::unique_ptr<limits::ResourceGroup> group,
                                                  const shim::ShimState* adopted) {
  posix::SpawnedProcess process;
  process.pid = link->pid();
  std::shared_ptr<Session> session(new Session(io, std::move(metadata), std::move(process), limits, std::move(group)));
  session->shim_ = std::move(link);
  // Output arrives from the shim straight into the ring (ShimLink::Handlers::prepare_output):
  // its slack past the window holds one message; the read buffer of a piped session is unused.
  session->ring_ = OutputRing(limits.attach_window_bytes, shim::kMaxMessage);
  session->use_ring_for_tail();
  session->read_buffer_ = std::vector<char>();
  session->shim_input_open_ = input_open;
  if (adopted) {
    session->ring_.skip_to(adopted->begin_offset);
    session->delivered_before_adoption_ = adopted->delivered_offset;
    session->delivered_offset_ = adopted->delivered_offset;
    session->shim_input_open_ = adopted->input_open;
    // The shim reaped the leader already: its pid is no longer ours to signal.
    session->reaped_ = adopted->reaped;
  }
  session->begin();
  return session;
}

Session::Session(asio::io_context& io, SessionMetadata metadata, posix::SpawnedProcess process, SessionLimits limits,
                 std::unique_ptr<limits::ResourceGroup> group)
    : io_(io),
      metadata_(std::move(metadata)),
      limits_(limits),
      pid_(process.pid),
      pidfd_(io),
      output_(io),
      input_(io),
      trailing_timer_(io),
      kill_timer_(io),
      read_buffer_(kReadChunk),
      last_used_(Clock::now()),
      pending_(limits.poll_buffer_bytes),
      ring_(limits.attach_window_bytes) {
  // A shim's session has none of these: the shim holds them.
  if (process.pidfd.valid()) pidfd_.assign(process.pidfd.release());
  if (process.output.valid()) output_.assign(process.output.release());
  if (process.input.valid()) input_.assign(process.input.release());
  use_ring_for_tail();
  group_ = std::move(group);
  if (group_) {
    group_->started(pid_);
    effective_limits_ = group_->effective();
  }
}

Session::~Session() {
  if (shim_) {
    if (!released_) {
      kill_tree();
      shim_->release();
    }
    group_.reset();
    return;
  }
  if (!reaped_ && pid_ > 0) {
    // Losing the last reference to a live process kills its group (Codex's Drop behaviour).
    kill_tree();
    reap_child(pidfd_.native_handle());
  }
  group_.reset();  // after the reap: removes the cgroup
}

// Every process of the session: its process group while the leader's pid is still ours, and
// its whole cgroup (which also holds what left the process group).
void Session::kill_tree() {
  if (!reaped_) posix::signal_process_group(pid_, SIGKILL).ok();
  if (group_) group_->kill_all().ok();
}

// The leader is reaped: keep what the group measured, then remove the group.
void Session::reaped_leader() {
  reaped_ = true;
  if (!group_) return;
  group_->leader_reaped();
  final_usage_ = group_->usage();
  final_hit_ = group_->limit_hit();
  measured_ = true;
  // A shim lives in the group beside its command until it is released: the group goes then.
  if (!shim_ || released_) group_.reset();
}

limits::ResourceUsage Session::usage() const { return group_ && !measured_ ? group_->usage() : final_usage_; }

limits::Termination Session::termination() const {
  if (cancelled_) return limits::Termination::kCancelled;
  const ExitStatus status = exit_.value_or(ExitStatus{});
  return limits::classify(group_ && !measured_ ? group_->limit_hit() : final_hit_, status.exit_code,
                          status.signal.has_value());
}

std::string Session::termination_note() const { return limits::termination_note(termination(), effective_limits_); }

void Session::begin() {
  if (shim_) {
    std::weak_ptr<Session> weak = shared_from_this();
    ShimLink::Handlers handlers;
    handlers.on_output = [weak](uint64_t offset, std::string_view data) {
      if (auto self = weak.lock()) self->on_shim_output(offset, data);
    };
    handlers.on_output_closed = [weak] {
      if (auto self = weak.lock()) self->on_output_closed();
    };
    handlers.on_exit = [weak](const ExitStatus& status) {
      if (auto self = weak.lock()) self->exited(status);
    };
    handlers.prepare_output = [weak](size_t max_bytes) -> std::array<std::span<char>, 2> {
      if (auto self = weak.lock()) return self->ring_.prepare(max_bytes);
      return {};
    };
    handlers.take_output = [weak](uint64_t offset, size_t n) {
      auto self = weak.lock();
      return self && self->take_shim_output(offset, n);
    };
    handlers.discard_output = [weak] {
      if (auto self = weak.lock()) self->ring_.commit(0);
    };
    handlers.on_lost = [weak](const std::string&) {
      // The shim died (killed from outside): the command died with it (its parent-death
      // signal); what it was doing is not known.
      auto self = weak.lock();
      if (!self) return;
      self->reaped_ = true;
      self->on_output_closed();
      if (!self->exit_) self->exited(ExitStatus{});
    };
    shim_->start(std::move(handlers));
    return;
  }
  watch_exit();
  read_more();
}

// Output from the shim carries its stream offset: a jump forward is output the shim had to
// drop (the ring wrapped while no daemon was there), an overlap is output already had.
void Session::on_shim_output(uint64_t offset, std::string_view data) {
  if (offset > ring_.end_offset()) ring_.skip_to(offset);
  if (offset < ring_.end_offset()) {
    const uint64_t overlap = ring_.end_offset() - offset;
    if (overlap >= data.size()) return;
    data.remove_prefix(static_cast<size_t>(overlap));
  }
  if (ring_.end_offset() < delivered_before_adoption_) {
    // Poll returned these before the restart: Attach may replay them, Poll must not.
    const uint64_t seen = std::min<uint64_t>(delivered_before_adoption_ - ring_.end_offset(), data.size());
    ring_.append(data.substr(0, static_cast<size_t>(seen)));
    data.remove_prefix(static_cast<size_t>(seen));
    if (data.empty()) {
      activity_soon();
      return;
    }
  }
  on_output(data);
  if (reading_blocked_by_lossless_watcher()) shim_->set_paused(true);
}

// An output message received into the ring's prepared space: kept there when it continues
// the stream exactly (the usual case); anything else (a gap, an overlap, bytes Poll had before
// a restart) goes back to the caller and through on_shim_output.
bool Session::take_shim_output(uint64_t offset, size_t n) {
  if (offset != ring_.end_offset() || offset < delivered_before_adoption_) return false;
  ring_.commit(n);
  for (std::span<const char> part : ring_.spans(offset, n)) push_pending(std::string_view(part.data(), part.size()));
  last_output_at_ = Clock::now();
  activity_soon();
  if (reading_blocked_by_lossless_watcher()) shim_->set_paused(true);
  return true;
}

// ---- output ---------------------------------------------------------------------------------

bool Session::reading_blocked_by_lossless_watcher() const {
  for (const auto& [id, w] : watchers_) {
    if (w.lossless && ring_.end_offset() - w.offset + kReadChunk > ring_.capacity()) return true;
  }
  return false;
}

void Session::read_more() {
  if (shim_) {
    shim_->set_paused(reading_blocked_by_lossless_watcher());
    return;
  }
  if (reading_ || output_closed_ || !output_.is_open() || reading_blocked_by_lossless_watcher()) return;
  reading_ = true;
  output_.async_read_some(asio::buffer(read_buffer_),
                          [self = shared_from_this()](const boost::system::error_code& ec, size_t n) {
                            self->on_read(ec, n);
                          });
}

void Session::on_read(const boost::system::error_code& ec, size_t n) {
  reading_ = false;
  if (n > 0) on_output(std::string_view(read_buffer_.data(), n));
  if (ec) {
    if (ec == asio::error::operation_aborted && !output_.is_open()) return;  // abandoned on purpose
    // EOF on a pipe; EIO on a PTY master once every slave fd is closed.
    on_output_closed();
    return;
  }
  read_more();
}

void Session::push_pending(std::string_view data) {
  if (!tail_in_ring_) {
    pending_.push(data);
    return;
  }
  after_head_ += data.size() - (after_head_ == 0 ? pending_.push_head(data) : 0);
}

std::string Session::drain_pending(uint64_t* omitted) {
  if (!tail_in_ring_) {
    *omitted = pending_.omitted_bytes();
    return pending_.drain();
  }
  std::string out = pending_.drain();  // the head
  const size_t tail = static_cast<size_t>(std::min<uint64_t>(after_head_, pending_.tail_budget()));
  *omitted = after_head_ - tail;
  out.reserve(out.size() + tail);
  ring_.append_to(ring_.end_offset() - tail, tail, out);
  after_head_ = 0;
  return out;
}

void Session::on_output(std::string_view data) {
  ring_.append(data);
  push_pending(data);
  last_output_at_ = Clock::now();
  if (shim_) {
    activity_soon();  // the link is reading more chunks now: wake waiters and watchers once
    return;
  }
  evaluate_waiters();
  fire_activity();
}

void Session::activity_soon() {
  if (activity_posted_) return;
  activity_posted_ = true;
  asio::post(io_, [weak = weak_from_this()] {
    auto self = weak.lock();
    if (!self) return;
    self->activity_posted_ = false;
    self->evaluate_waiters();
    self->fire_activity();
  });
}

void Session::on_output_closed() {
  if (output_closed_) return;
  output_closed_ = true;
  boost::system::error_code ignored;
  output_.close(ignored);
  maybe_finish();
  evaluate_waiters();
  fire_activity();
}

// ---- exit -----------------------------------------------------------------------------------

void Session::watch_exit() {
  pidfd_.async_wait(asio::posix::stream_descriptor::wait_read,
                    [self = shared_from_this()](const boost::system::error_code& ec) {
                      if (!ec) self->on_exit_ready();
                    });
}

void Session::on_exit_ready() {
  // The leader stays a zombie (its pid is the process-group id we may still signal); it is
  // reaped in finish().
  ExitPeek peek = peek_exit(pidfd_.native_handle());
  switch (peek.state) {
    case ExitPeek::State::kRunning:
    case ExitPeek::State::kError:
      watch_exit();
      return;
    case ExitPeek::State::kAlreadyReaped:  // reaped elsewhere: nothing more to learn
      exit_ = ExitStatus{};
      reaped_ = true;
      break;
    case ExitPeek::State::kExited:
      exit_ = peek.status;
      break;
  }
  exited(*exit_);
}

void Session::exited(const ExitStatus& status) {
  if (exit_seen_at_) return;
  exit_ = status;
  exit_seen_at_ = Clock::now();
  held_until_exit_.clear();
  maybe_finish();
  if (!finished_) {
    // Output still open: a background child may hold it. Give it the trailing grace, then kill
    // what is left of the group, then (if the stream still does not close) abandon it.
    trailing_timer_.expires_after(kTrailingOutputGrace);
    trailing_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->finished_) return;
      self->kill_tree();  // stragglers die with the main process (docs/sandbox.md)
      self->trailing_timer_.expires_after(kTrailingOutputGrace);
      self->trailing_timer_.async_wait([self](const boost::system::error_code& ec2) {
        if (!ec2) self->abandon_output_when_quiet();
      });
    });
  }
  evaluate_waiters();
  fire_activity();
}

// The command has exited and its group was killed, but the output has not closed.
void Session::abandon_output_when_quiet() {
  if (finished_) return;
  if (reading_blocked_by_lossless_watcher()) return;  // a watcher is still catching up
  const auto quiet_at = last_output_at_ + kTrailingOutputGrace;
  if (shim_ && Clock::now() < quiet_at) {
    // The shim is still forwarding what the command wrote before it ended (a lossless watcher
    // held it back): nothing it sends is dropped while it flows.
    trailing_timer_.expires_at(quiet_at);
    trailing_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec) self->abandon_output_when_quiet();
    });
    return;
  }
  // Someone outside the group (setsid) holds the pipe; stop listening.
  on_output_closed();
}

void Session::maybe_finish() {
  if (!finished_ && exit_ && output_closed_) finish();
}

void Session::finish() {
  finished_ = true;
  trailing_timer_.cancel();
  if (shim_) {
    if (!reaped_) {
      kill_tree();
      shim_->reap();
      reaped_ = true;
    }
    reaped_leader();
    kill_timer_.cancel();
    input_queue_.clear();
    return;
  }
  if (!reaped_) {
    // Kill what the command left behind in its group and cgroup, then reap the zombie leader.
    kill_tree();
    reap_if_exited(pidfd_.native_handle());
    reaped_leader();
  }
  boost::system::error_code ignored;
  pidfd_.close(ignored);
  kill_timer_.cancel();
  input_queue_.clear();
  input_.close(ignored);
}

// ---- waiting --------------------------------------------------------------------------------

Session::WaitId Session::wait(WaitMode mode, Clock::time_point deadline, std::function<void(Collected)> done,
                              std::optional<ReRead> reread) {
  WaitId id = next_wait_id_++;
  auto timer = std::make_unique<asio::steady_timer>(io_);
  timer->expires_at(deadline);
  timer->async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->evaluate_waiters();
  });
  waiters_.emplace(id, Waiter{mode, deadline, std::move(done), std::move(timer), reread, std::nullopt});
  evaluate_waiters();
  return id;
}

void Session::cancel_wait(WaitId id) { waiters_.erase(id); }

void Session::evaluate_waiters() {
  const auto now = Clock::now();
  std::vector<WaitId> ready;
  for (auto& [id, w] : waiters_) {
    bool done = finished_ || now >= w.deadline;
    if (!done && w.mode == WaitMode::kUntilActivity) {
      // A re-read has something as soon as the stream holds bytes at or after its offset (or
      // lost some of them: that is reported at once too).
      const bool has_output = w.reread ? ring_.end_offset() > w.reread->offset : !pending_empty();
      if (has_output) {
        if (!w.output_seen_at) w.output_seen_at = now;
        const auto settled = std::min({w.deadline, last_output_at_ + kBurstQuiet, *w.output_seen_at + kBurstCap});
        if (now >= settled) {
          done = true;
        } else {
          arm_waiter_timer(w, settled);
        }
      }
    }
    if (!done && exit_seen_at_) {
      auto cap = std::min(w.deadline, *exit_seen_at_ + kPostExitCollectCap);
      if (now >= cap) {
        done = true;
      } else if (w.timer->expiry() > cap) {
        arm_waiter_timer(w, cap);
      }
    }
    if (done) ready.push_back(id);
  }
  for (WaitId id : ready) complete_waiter(id);
}

void Session::arm_waiter_timer(Waiter& waiter, Clock::time_point at) {
  if (waiter.timer->expiry() == at) return;
  waiter.timer->expires_at(at);
  waiter.timer->async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->evaluate_waiters();
  });
}

void Session::complete_waiter(WaitId id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return;
  auto done = std::move(it->second.done);
  const std::optional<ReRead> reread = it->second.reread;
  waiters_.erase(it);
  Collected collected;
  if (reread) {
    collect_reread(*reread, collected);
  } else {
    collected.output = drain_pending(&collected.omitted_bytes);
    collected.output_offset = ring_.end_offset();
    delivered_offset_ = collected.output_offset;
  }
  collected.owner_uid = metadata_.owner_uid;
  collected.sandbox = metadata_.sandbox;
  // The shim keeps the offset, so a restarted daemon's Poll continues from there.
  if (shim_) shim_->delivered(delivered_offset_);
  // The exit only with the last byte: a re-read that stopped short is not the final result.
  if (collected.output_offset == ring_.end_offset()) collected.exit = exit_;
  collected.usage = usage();
  if (collected.exit) {
    collected.termination = termination();
    collected.termination_note = termination_note();
  }
  done(std::move(collected));
}

// The stream from `reread.offset` (what is still retained of it), and delivery moved forward
// to the end of what is returned: a later plain drain neither repeats those bytes nor skips
// any the caller has not had.
void Session::collect_reread(const ReRead& reread, Collected& collected) {
  const uint64_t from = std::max(reread.offset, ring_.begin_offset());
  collected.lost_bytes = from - reread.offset;
  collected.output = ring_.read(from, reread.max_bytes);
  if (from + collected.output.size() < ring_.end_offset()) {
    // Cut by the budget: end on a character boundary, so that the UTF-8 the RPC returns is
    // the stream's bytes (the rest of the character comes with the next read).
    const std::string& out = collected.output;
    for (size_t back = 1; back <= 3 && back <= out.size(); ++back) {
      const auto c = static_cast<unsigned char>(out[out.size() - back]);
      if ((c & 0xC0) == 0x80) continue;  // continuation byte
      if (utf8_sequence_length(c) > back && back < out.size()) collected.output.resize(out.size() - back);
      break;
    }
  }
  collected.output_offset = from + collected.output.size();
  if (collected.output_offset <= delivered_offset_) return;  // bytes the poll buffer already gave out
  delivered_offset_ = collected.output_offset;
  // Refill the poll buffer with what is still undelivered, [output_offset, end), from the ring
  // (which holds it: output_offset is within the ring's window).
  uint64_t dropped = 0;
  drain_pending(&dropped);
  push_pending(ring_.read(delivered_offset_, static_cast<size_t>(ring_.end_offset() - delivered_offset_)));
}

// ---- input and signals ----------------------------------------------------------------------

Status Session::write_input(std::string data) {
  if (shim_) {
    if (!has_input()) {
      return FailedPrecondition("stdin is closed for this session; rerun exec_command with tty=true to keep stdin open");
    }
    shim_->send_input(data);
    return Status::Ok();
  }
  if (!input_.is_open()) {
    return FailedPrecondition("stdin is closed for this session; rerun exec_command with tty=true to keep stdin open");
  }
  if (input_queued_bytes_ + data.size() > limits_.max_pending_input_bytes) {
    return ResourceExhausted("more than " + std::to_string(limits_.max_pending_input_bytes) +
                             " bytes of input are waiting for the command to read them");
  }
  input_queued_bytes_ += data.size();
  input_queue_.push_back(std::move(data));
  pump_input();
  return Status::Ok();
}

void Session::pump_input() {
  if (writing_ || input_queue_.empty() || !input_.is_open()) return;
  writing_ = true;
  asio::async_write(input_, asio::buffer(input_queue_.front()),
                    [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                      self->writing_ = false;
                      if (self->input_queue_.empty()) return;  // cleared by finish()
                      self->input_queued_bytes_ -= self->input_queue_.front().size();
                      self->input_queue_.pop_front();
                      if (ec) {  // the command closed its terminal: drop what is queued
                        self->input_queue_.clear();
                        self->input_queued_bytes_ = 0;
                        return;
                      }
                      self->pump_input();
                    });
}

Status Session::resize(unsigned short rows, unsigned short cols) {
  if (!metadata_.tty) return FailedPrecondition("session " + std::to_string(id()) + " has no terminal to resize");
  if (shim_) {
    if (exit_) return FailedPrecondition("session " + std::to_string(id()) + " has exited");
    shim_->resize(rows, cols);
    terminal_size_ = {rows, cols};
    return Status::Ok();
  }
  if (!input_.is_open()) return FailedPrecondition("session " + std::to_string(id()) + " has exited");
  CODEXD_RETURN_IF_ERROR(posix::resize_pty(input_.native_handle(), rows, cols));
  terminal_size_ = {rows, cols};
  return Status::Ok();
}

Status Session::interrupt() {
  if (reaped_) return Status::Ok();
  return posix::signal_process_group(pid_, SIGINT);
}

Status Session::signal_all(int signal) {
  if (finished_) return Status::Ok();
  if (group_) return group_->signal_all(signal);
  if (reaped_) return Status::Ok();
  return posix::signal_process_group(pid_, signal);
}

void Session::terminate(std::chrono::milliseconds grace) {
  if (finished_) return;
  signal_all(SIGTERM).ok();
  kill_timer_.expires_after(grace);
  kill_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec && !self->finished_) self->kill();
  });
}

void Session::kill() {
  if (!finished_) kill_tree();
}

void Session::release() {
  released_ = true;
  if (!finished_) kill();
  if (shim_) shim_->release();
  if (measured_) group_.reset();  // the shim ends now; the group goes once it has
}

void Session::detach_for_restart() {
  released_ = true;
  if (shim_) shim_->detach();
  // The group stays (with its limits and the command in it) for the next daemon; the
  // object goes without removing it.
  if (group_) group_->keep_for_next_daemon();
  group_.reset();
  trailing_timer_.cancel();
  kill_timer_.cancel();
  waiters_.clear();
}

UniqueFd Session::shutdown_now() {
  if (shim_) {
    released_ = true;
    if (!reaped_) kill_tree();
    reaped_ = true;
    UniqueFd shim_end = shim_->release();
    reaped_leader();
    trailing_timer_.cancel();
    kill_timer_.cancel();
    waiters_.clear();
    return shim_end;
  }
  released_ = true;
  if (!reaped_) {
    kill_tree();
    reap_child(pidfd_.native_handle());
  }
  reaped_leader();
  boost::system::error_code ignored;
  pidfd_.close(ignored);
  output_.close(ignored);
  input_.close(ignored);
  trailing_timer_.cancel();
  kill_timer_.cancel();
  waiters_.clear();
  return UniqueFd();
}

// ---- attach ---------------------------------------------------------------------------------

Session::WatcherId Session::add_watcher(uint64_t start_offset, bool lossless) {
  WatcherId id = next_watcher_id_++;
  watchers_.emplace(id, Watcher{std::min(start_offset, ring_.end_offset()), lossless});
  return id;
}

void Session::remove_watcher(WatcherId id) {
  watchers_.erase(id);
  read_more();  // a lossless watcher may have been holding the reader back
}

WatchStep Session::next_for_watcher(WatcherId id, size_t max_bytes) {
  std::string data;
  WatchStep step = next_for_watcher(id, max_bytes, data);
  step.data = std::move(data);
  return step;
}

WatchStep Session::next_for_watcher(WatcherId id, size_t max_bytes, std::string& data) {
  WatchStep step;
  auto it = watchers_.find(id);
  if (it == watchers_.end()) return step;
  Watcher& w = it->second;
  if (w.offset < ring_.begin_offset()) {
    step.kind = WatchStep::Kind::kGap;
    step.from = w.offset;
    step.to = ring_.begin_offset();
    w.offset = step.to;
    return step;
  }
  if (w.offset < ring_.end_offset()) {
    step.kind = WatchStep::Kind::kData;
    step.offset = w.offset;
    ring_.read_into(w.offset, max_bytes, data);
    w.offset += data.size();
    if (w.lossless) read_more();
    return step;
  }
  if (finished_) {
    step.kind = WatchStep::Kind::kExit;
    step.exit = exit_.value_or(ExitStatus{});
    step.final_offset = ring_.end_offset();
  }
  return step;
}

void Session::notify_on_activity(std::function<void()> callback) { activity_callbacks_.push_back(std::move(callback)); }

void Session::fire_activity() {
  if (activity_callbacks_.empty()) return;
  auto callbacks = std::move(activity_callbacks_);
  activity_callbacks_.clear();
  for (auto& cb : callbacks) cb();
}

}  // namespace codexd::exec
