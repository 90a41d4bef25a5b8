// One call from admission to result: orchestrator (policy, approval, sandbox) -> ExecEngine /
// one-shot run -> sandbox-denial check -> maybe an approved unsandboxed retry -> audit line.
// Runs on the core io thread. The gRPC layer only translates to and from protobuf.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "base/histogram.h"

#include "daemon/exec/exec_engine.h"
#include "daemon/exec/one_shot.h"
#include "daemon/orchestrator/audit_log.h"
#include "daemon/orchestrator/orchestrator.h"

namespace codexd::orchestrator {

struct CommandResult {
  Status error;                           // an RPC error (bad workdir, unknown user, ...)
  std::optional<Rejection> rejection;     // nothing ran
  std::shared_ptr<const ExecPlan> plan;   // the plan of the attempt that produced the result
  bool likely_sandbox_denied = false;
  std::optional<exec::UnifiedOutcome> unified;   // ExecCommand
  std::optional<exec::OneShotOutcome> one_shot;  // RunCommand
  std::string one_shot_text;                     // RunCommand model text
};

// Lets the RPC give up: aborts a pending approval, or stops waiting (ExecCommand: the session
// lives on) / terminates the command (RunCommand: SIGTERM, 50 ms, SIGKILL).
class CallHandle {
 public:
  void client_gone();

 private:
  friend class CommandRunner;
  Orchestrator* orchestrator_ = nullptr;
  exec::ExecEngine* engine_ = nullptr;
  std::shared_ptr<PendingAdmission> admission_;
  std::optional<exec::WaitTicket> wait_;
  std::function<void()> wait_abandoned_;  // completes the call (and its audit line) when the wait is dropped
  std::shared_ptr<exec::OneShotRun> run_;
  bool gone_ = false;
  bool finished_ = false;
};

// What the calls did, for the metrics endpoint. Core thread only (read there too).
struct CallMetrics {
  // Each finished call by its audit decision and outcome (docs/approvals.md "Audit log").
  std::map<std::pair<std::string, std::string>, uint64_t> calls;
  // How long the spawn took (plan ready -> process started), by sandbox backend.
  std::map<std::string, Histogram> launch_seconds;
  // How long calls waited for reviewers (calls that waited at all).
  Histogram approval_wait_seconds{latency_buckets_seconds()};
};

class CommandRunner {
 public:
  using Done = std::function<void(CommandResult)>;

  CommandRunner(boost::asio::io_context& io, Orchestrator& orchestrator, exec::ExecEngine& engine, AuditLog& audit);

  std::shared_ptr<CallHandle> exec_command(ExecRequest request, uint32_t yield_ms, uint32_t max_output_tokens, Done done);
  std::shared_ptr<CallHandle> run_command(ExecRequest request, Done done);
  const CallMetrics& metrics() const { return metrics_; }

 private:
  struct CallState;
  void admitted(std::shared_ptr<CallState> call, AdmitResult admitted);
  void start_attempt(std::shared_ptr<CallState> call);
  void attempt_finished(std::shared_ptr<CallState> call, bool likely_denied, bool timed_out, bool signaled);
  void complete(std::shared_ptr<CallState> call, CommandResult result, const std::string& outcome);
  void observe_launch(sandbox::Backend backend, std::chrono::steady_clock::time_point started);

  boost::asio::io_context& io_;
  Orchestrator& orchestrator_;
  exec::ExecEngine& engine_;
  AuditLog& audit_;
  CallMetrics metrics_;
};

}  // namespace codexd::orchestrator
