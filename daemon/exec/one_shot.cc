#include "daemon/exec/one_shot.h"

#include <signal.h>

#include <algorithm>

#include "daemon/exec/exit_status.h"
#include "daemon/exec/launch_spawn.h"

namespace codexd::exec {
namespace {

namespace asio = boost::asio;

constexpr auto kCancelGrace = std::chrono::milliseconds(50);     // CANCELLATION_TERMINATION_GRACE_PERIOD
constexpr auto kIoDrainTimeout = std::chrono::milliseconds(2000);  // IO_DRAIN_TIMEOUT_MS
constexpr size_t kReadChunk = 8192;

}  // namespace

std::string aggregate_output(const std::string& out, const std::string& err, size_t cap) {
  if (out.size() + err.size() <= cap) return out + err;
  size_t want_out = std::min(out.size(), cap / 3);
  size_t want_err = std::min(err.size(), cap - want_out);
  size_t spare = cap - want_out - want_err;
  size_t take_out = std::min(out.size(), want_out + spare);
  return out.substr(0, take_out) + err.substr(0, want_err);
}

std::string one_shot_content(const OneShotOutcome& outcome) {
  std::string content;
  if (outcome.timed_out) content = "command timed out after " + std::to_string(outcome.timeout_ms) + " milliseconds\n";
  if (!outcome.termination_note.empty()) content += outcome.termination_note + "\n";
  content += outcome.aggregated;
  return content;
}

Result<std::shared_ptr<OneShotRun>> OneShotRun::start(asio::io_context& io, const LaunchSpec& launch,
                                                      const ChannelOwner& owner, uint32_t timeout_ms, Done done,
                                                      limits::LimitsManager* limits) {
  static uint64_t runs = 0;  // core thread only
  CODEXD_ASSIGN_OR_RETURN(auto group, create_group(limits, launch, "run-" + std::to_string(++runs)));
  posix::SpawnRequest request = spawn_request(launch, posix::StdioMode::kPipesSeparate);
  if (group) group->prepare(request);
  CODEXD_ASSIGN_OR_RETURN(LaunchedProcess launched, spawn_launch(launch, std::move(request), owner));
  std::shared_ptr<OneShotRun> run(
      new OneShotRun(io, std::move(launched.process), timeout_ms, std::move(done), std::move(group)));
  run->held_until_exit_ = std::move(launched.keepalive);
  run->begin();
  return run;
}

OneShotRun::OneShotRun(asio::io_context& io, posix::SpawnedProcess process, uint32_t timeout_ms, Done done,
                       std::unique_ptr<limits::ResourceGroup> group)
    : pid_(process.pid),
      start_(Clock::now()),
      pidfd_(io, process.pidfd.release()),
      stdout_(io, process.output.release()),
      stderr_(io, process.error.release()),
      timeout_timer_(io),
      drain_timer_(io),
      kill_timer_(io),
      stdout_buffer_(kReadChunk),
      stderr_buffer_(kReadChunk),
      done_(std::move(done)),
      group_(std::move(group)) {
  outcome_.timeout_ms = timeout_ms;
  if (group_) group_->started(pid_);
}

OneShotRun::~OneShotRun() {
  if (!reaped_) {
    kill_tree();
    reap_child(pidfd_.native_handle());
  }
  group_.reset();  // after the reap: removes the cgroup
}

// Its process group while the leader's pid is ours, and its whole cgroup.
void OneShotRun::kill_tree() {
  if (!reaped_) posix::signal_process_group(pid_, SIGKILL).ok();
  if (group_) group_->kill_all().ok();
}

void OneShotRun::begin() {
  auto self = shared_from_this();
  pidfd_.async_wait(asio::posix::stream_descriptor::wait_read, [self](const boost::system::error_code& ec) {
    if (!ec) self->on_exit_ready();
  });
  read(stdout_, stdout_buffer_, outcome_.stdout_bytes, stdout_closed_);
  read(stderr_, stderr_buffer_, outcome_.stderr_bytes, stderr_closed_);
  timeout_timer_.expires_after(std::chrono::milliseconds(outcome_.timeout_ms));
  timeout_timer_.async_wait([self](const boost::system::error_code& ec) {
    if (ec || self->exit_) return;
    // Codex: expiration kills the group at once, no SIGTERM grace; reported as exit 124.
    self->outcome_.timed_out = true;
    self->kill_tree();
  });
}

void OneShotRun::read(asio::posix::stream_descriptor& stream, std::vector<char>& buffer, std::string& sink,
                      bool& closed) {
  stream.async_read_some(asio::buffer(buffer), [self = shared_from_this(), &stream, &buffer, &sink, &closed](
                                                   const boost::system::error_code& ec, size_t n) {
    // Past the cap, bytes are read and dropped so the pipe never back-pressures the command.
    if (n > 0 && sink.size() < kOneShotStreamCap) sink.append(buffer.data(), std::min(n, kOneShotStreamCap - sink.size()));
    if (ec) {
      closed = true;
      self->maybe_complete();
      return;
    }
    self->read(stream, buffer, sink, closed);
  });
}

void OneShotRun::on_exit_ready() {
  ExitPeek peek = peek_exit(pidfd_.native_handle());
  if (peek.state == ExitPeek::State::kRunning) {
    pidfd_.async_wait(asio::posix::stream_descriptor::wait_read,
                      [self = shared_from_this()](const boost::system::error_code& ec) {
                        if (!ec) self->on_exit_ready();
                      });
    return;
  }
  // A failed waitid counts as an exit of unknown status (exit_code -1).
  exit_ = peek.state == ExitPeek::State::kExited ? peek.status : ExitStatus{};
  held_until_exit_.reset();
  timeout_timer_.cancel();
  // Readers get IO_DRAIN_TIMEOUT after the exit; a grandchild holding a pipe is not waited for.
  drain_timer_.expires_after(kIoDrainTimeout);
  drain_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->complete();
  });
  maybe_complete();
}

void OneShotRun::maybe_complete() {
  if (exit_ && stdout_closed_ && stderr_closed_) complete();
}

void OneShotRun::complete() {
  if (completed_) return;
  completed_ = true;
  drain_timer_.cancel();
  kill_timer_.cancel();
  // A one-shot command leaves nothing behind: kill the rest of its group, then reap the leader.
  kill_tree();
  reap_child(pidfd_.native_handle());
  reaped_ = true;
  boost::system::error_code ignored;
  stdout_.close(ignored);
  stderr_.close(ignored);
  pidfd_.close(ignored);

  outcome_.wall_time_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  if (outcome_.timed_out) {
    outcome_.exit_code = kTimeoutExitCode;
  } else if (outcome_.cancelled) {
    outcome_.exit_code = 1;  // Codex reports a cancelled command as exit 1
    outcome_.signal = exit_ ? exit_->signal : std::nullopt;
  } else if (exit_) {
    outcome_.exit_code = exit_->exit_code;
    outcome_.signal = exit_->signal;
  }
  settle_outcome();
  outcome_.aggregated = aggregate_output(outcome_.stdout_bytes, outcome_.stderr_bytes);
  auto done = std::move(done_);
  if (done) done(std::move(outcome_));
}

// After the reap: how it ended and what it used, then the group goes.
void OneShotRun::settle_outcome() {
  limits::LimitHit hit = limits::LimitHit::kNone;
  if (group_) {
    group_->leader_reaped();
    outcome_.usage = group_->usage();
    hit = group_->limit_hit();
  }
  if (outcome_.timed_out) {
    outcome_.termination = limits::Termination::kTimedOut;
  } else if (outcome_.cancelled) {
    outcome_.termination = limits::Termination::kCancelled;
  } else {
    outcome_.termination = limits::classify(hit, outcome_.exit_code, outcome_.signal.has_value());
  }
  if (group_) outcome_.termination_note = limits::termination_note(outcome_.termination, group_->effective());
  group_.reset();
}

void OneShotRun::cancel() {
  if (completed_ || exit_) return;
  outcome_.cancelled = true;
  if (group_) group_->signal_all(SIGTERM).ok();
  else posix::signal_process_group(pid_, SIGTERM).ok();
  kill_timer_.expires_after(kCancelGrace);
  kill_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec && !self->exit_) self->kill_tree();
  });
}

}  // namespace codexd::exec
