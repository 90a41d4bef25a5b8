// Classic one-shot exec (Codex's shell / shell_command): run to completion or timeout, with
// stdout and stderr kept apart. Runs on the core io thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "daemon/exec/launch_spec.h"
#include "daemon/exec/session.h"
#include "base/status.h"
#include "platform/limits/limits.h"

namespace codexd::exec {

inline constexpr uint32_t kDefaultOneShotTimeoutMs = 10'000;
inline constexpr int kTimeoutExitCode = 124;
inline constexpr size_t kOneShotStreamCap = 1024 * 1024;

struct OneShotOutcome {
  int exit_code = -1;
  std::optional<int> signal;
  bool timed_out = false;
  bool cancelled = false;
  std::string stdout_bytes;  // first 1 MiB
  std::string stderr_bytes;  // first 1 MiB
  std::string aggregated;    // stdout then stderr sharing 1 MiB (Codex's 1/3 rule)
  double wall_time_seconds = 0;
  uint32_t timeout_ms = 0;
  limits::Termination termination = limits::Termination::kExited;
  std::string termination_note;  // "killed: memory limit 256 MiB reached" or ""
  limits::ResourceUsage usage;
};

// Codex's aggregate: when both exceed the cap together, stdout gets up to a third, stderr the
// rest, and what stderr leaves unused goes back to stdout.
std::string aggregate_output(const std::string& out, const std::string& err, size_t cap = kOneShotStreamCap);

// The model-visible body: the timeout notice, then the aggregate.
std::string one_shot_content(const OneShotOutcome& outcome);

class OneShotRun : public std::enable_shared_from_this<OneShotRun> {
 public:
  using Done = std::function<void(Result<OneShotOutcome>)>;

  // `owner` labels the sandbox's proxy connections (network mode proxy); `limits` (may be
  // null) gives the run its resource group, named "run-<n>" under its agent.
  static Result<std::shared_ptr<OneShotRun>> start(boost::asio::io_context& io, const LaunchSpec& launch,
                                                   const ChannelOwner& owner, uint32_t timeout_ms, Done done,
                                                   limits::LimitsManager* limits = nullptr);
  ~OneShotRun();

  // The caller went away: SIGTERM to the group, 50 ms, then SIGKILL (reported as cancelled).
  void cancel();

 private:
  OneShotRun(boost::asio::io_context& io, posix::SpawnedProcess process, uint32_t timeout_ms, Done done,
             std::unique_ptr<limits::ResourceGroup> group);
  void kill_tree();
  void settle_outcome();
  void begin();
  void read(boost::asio::posix::stream_descriptor& stream, std::vector<char>& buffer, std::string& sink, bool& closed);
  void on_exit_ready();
  void maybe_complete();
  void complete();

  pid_t pid_;
  Clock::time_point start_;
  boost::asio::posix::stream_descriptor pidfd_;
  boost::asio::posix::stream_descriptor stdout_;
  boost::asio::posix::stream_descriptor stderr_;
  boost::asio::steady_timer timeout_timer_;
  boost::asio::steady_timer drain_timer_;
  boost::asio::steady_timer kill_timer_;
  std::vector<char> stdout_buffer_, stderr_buffer_;
  bool stdout_closed_ = false, stderr_closed_ = false;
  bool reaped_ = false;
  std::shared_ptr<void> held_until_exit_;  // the proxy ports of the sandbox, if any
  bool completed_ = false;
  std::optional<ExitStatus> exit_;
  OneShotOutcome outcome_;
  Done done_;
  std::unique_ptr<limits::ResourceGroup> group_;
};

}  // namespace codexd::exec
