#include "daemon/orchestrator/command_runner.h"

#include <chrono>

#include "base/shell_quote.h"
#include "daemon/exec/truncation.h"
#include "daemon/orchestrator/one_shot_result.h"

namespace codexd::orchestrator {

void CallHandle::client_gone() {
  if (finished_ || gone_) return;
  gone_ = true;
  if (admission_ && !admission_->finished) orchestrator_->abandon(admission_);
  if (wait_) {
    // Dropping the wait drops its callback, so the call ends here (result, audit line).
    if (wait_abandoned_) wait_abandoned_();
    engine_->abandon(*wait_);  // the session itself lives on
  }
  if (run_) run_->cancel();             // a one-shot command dies with its caller
}

struct CommandRunner::CallState {
  // Without argv, script and env, which can be megabytes and live in the plan (issue 19): the
  // call keeps who asked and how, the plan what runs.
  ExecRequest request;
  uint32_t yield_ms = 0;
  uint32_t max_output_tokens = exec::kDefaultMaxOutputTokens;
  Done done;
  std::shared_ptr<CallHandle> handle;
  std::shared_ptr<const ExecPlan> plan;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  double approval_wait_ms = 0;
  bool reviewed = false;
  std::optional<uid_t> reviewer_uid;  // the last reviewer who answered for this call
  std::string reviewer_agent;
  ReviewOutcome review = ReviewOutcome::kNotNeeded;
  std::string initial_sandbox;
  CommandResult result;

  // The reviewer who answered this attempt's question, if one did (a cached or policy decision
  // leaves the call's earlier reviewer in place).
  void take_reviewer(const ExecPlan& attempt) {
    if (!attempt.reviewer_uid) return;
    reviewer_uid = attempt.reviewer_uid;
    reviewer_agent = attempt.reviewer_agent;
  }
};

CommandRunner::CommandRunner(boost::asio::io_context& io, Orchestrator& orchestrator, exec::ExecEngine& engine,
                             AuditLog& audit)
    : io_(io), orchestrator_(orchestrator), engine_(engine), audit_(audit) {}

std::shared_ptr<CallHandle> CommandRunner::exec_command(ExecRequest request, uint32_t yield_ms,
                                                        uint32_t max_output_tokens, Done done) {
  auto call = std::make_shared<CallState>();
  // The large parts go to the plan alone; every other field is copied (small).
  auto argv = std::move(request.argv);
  auto env = std::move(request.env);
  ExecRequest whole = request;
  whole.argv = std::move(argv);
  whole.env = std::move(env);
  call->request = std::move(request);
  call->yield_ms = yield_ms;
  call->max_output_tokens = max_output_tokens;
  call->done = std::move(done);
  call->handle = std::make_shared<CallHandle>();
  call->handle->orchestrator_ = &orchestrator_;
  call->handle->engine_ = &engine_;
  auto handle = call->handle;
  handle->admission_ = orchestrator_.admit(std::move(whole), [this, call](AdmitResult r) { admitted(call, std::move(r)); });
  return handle;
}

std::shared_ptr<CallHandle> CommandRunner::run_command(ExecRequest request, Done done) {
  return exec_command(std::move(request), 0, exec::kDefaultMaxOutputTokens, std::move(done));
}

void CommandRunner::admitted(std::shared_ptr<CallState> call, AdmitResult admitted) {
  if (admitted.plan) {
    call->plan = admitted.plan;
    call->approval_wait_ms += admitted.plan->approval_wait_ms;
    call->reviewed = call->reviewed || admitted.plan->reviewed;
    call->take_reviewer(*admitted.plan);
    if (admitted.plan->attempt == 1) call->review = admitted.plan->review;
  }
  if (!admitted.error.ok()) {
    CommandResult result;
    result.error = admitted.error;
    result.plan = admitted.plan;
    complete(call, std::move(result), "rejected");
    return;
  }
  if (admitted.rejection) {
    CommandResult result;
    result.rejection = admitted.rejection;
    result.plan = admitted.plan;
    complete(call, std::move(result), "rejected");
    return;
  }
  if (call->plan->attempt == 1) call->initial_sandbox = std::string(sandbox::to_string(call->plan->backend));
  if (call->request.dry_run) {
    CommandResult result;
    result.plan = call->plan;
    complete(call, std::move(result), "dry_run");
    return;
  }
  if (call->handle->gone_) {
    CommandResult result;
    result.plan = call->plan;
    result.error = Status(StatusCode::kCancelled, "the client went away before the command started");
    complete(call, std::move(result), "cancelled");
    return;
  }
  start_attempt(call);
}

void CommandRunner::observe_launch(sandbox::Backend backend, std::chrono::steady_clock::time_point started) {
  auto [it, added] = metrics_.launch_seconds.try_emplace(std::string(sandbox::to_string(backend)), latency_buckets_seconds());
  it->second.observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

void CommandRunner::start_attempt(std::shared_ptr<CallState> call) {
  const ExecPlan& plan = *call->plan;
  if (call->request.tool == Tool::kUnifiedExec) {
    exec::SessionMetadata meta;
    meta.owner_uid = call->request.caller.uid;
    meta.agent_id = call->request.caller.agent_id;
    meta.call_id = call->request.call_id;
    meta.argv = call->plan->request.argv;
    meta.cwd = call->request.workdir;
    meta.started_at = std::chrono::system_clock::now();
    const auto start = exec::Clock::now();
    call->handle->wait_abandoned_ = [this, weak = std::weak_ptr<CallState>(call)] {
      auto c = weak.lock();
      if (!c) return;
      CommandResult result;
      result.plan = c->plan;
      result.error = Status(StatusCode::kCancelled, "the client went away while waiting for output");
      complete(c, std::move(result), "cancelled");
    };
    const auto spawn_started = std::chrono::steady_clock::now();
    call->handle->wait_ = engine_.exec(
        std::move(meta), plan.launch, start, call->yield_ms, call->max_output_tokens,
        [this, call](Result<exec::UnifiedOutcome> outcome) {
          call->handle->wait_.reset();
          if (!outcome.ok()) {
            CommandResult result;
            result.plan = call->plan;
            if (outcome.status().code() == StatusCode::kResourceExhausted) {
              result.error = outcome.status();
            } else {
              result.rejection = Rejection{Rejection::Reason::kSpawnFailed, outcome.status().message(), {}};
            }
            complete(call, std::move(result), "process_error");
            return;
          }
          const bool exited = outcome->exit_code.has_value();
          bool likely = exited && sandbox::is_likely_sandbox_denied(call->plan->backend, *outcome->exit_code,
                                                                    outcome->raw_output);
          call->result = CommandResult{};
          call->result.plan = call->plan;
          call->result.unified = std::move(outcome).value();
          call->result.likely_sandbox_denied = likely;
          attempt_finished(call, likely, false, call->result.unified->signal.has_value());
        });
    observe_launch(plan.backend, spawn_started);
    return;
  }
  exec::ChannelOwner owner{call->request.caller.uid, call->request.caller.agent_id, 0, shell_join(call->plan->request.argv)};
  const auto spawn_started = std::chrono::steady_clock::now();
  auto run = exec::OneShotRun::start(io_, plan.launch, owner, call->request.timeout_ms, [this, call](Result<exec::OneShotOutcome> outcome) {
    call->handle->run_.reset();
    if (!outcome.ok()) {
      CommandResult result;
      result.plan = call->plan;
      result.rejection = Rejection{Rejection::Reason::kSpawnFailed, outcome.status().message(), {}};
      complete(call, std::move(result), "process_error");
      return;
    }
    const auto& o = *outcome;
    bool likely = one_shot_likely_denied(call->plan->backend, o);
    call->result = CommandResult{};
    call->result.plan = call->plan;
    call->result.one_shot = std::move(outcome).value();
    call->result.likely_sandbox_denied = likely;
    call->result.one_shot_text = one_shot_text(*call->result.one_shot);
    attempt_finished(call, likely, call->result.one_shot->timed_out || call->result.one_shot->cancelled,
                     call->result.one_shot->signal.has_value());
  }, engine_.limits());
  if (!run.ok()) {
    CommandResult result;
    result.plan = call->plan;
    result.rejection = Rejection{Rejection::Reason::kSpawnFailed, run.status().message(), {}};
    complete(call, std::move(result), "process_error");
    return;
  }
  observe_launch(plan.backend, spawn_started);
  call->handle->run_ = *run;
}

void CommandRunner::attempt_finished(std::shared_ptr<CallState> call, bool likely_denied, bool timed_out, bool signaled) {
  if (!call->handle->gone_ && orchestrator_.retry_allowed(*call->plan, likely_denied, timed_out, signaled)) {
    call->handle->admission_ = orchestrator_.plan_retry(call->plan, [this, call](AdmitResult r) {
      if (r.rejection || !r.error.ok()) {
        // The retry was refused: the caller gets the sandboxed attempt's result as it was.
        if (r.plan) {
          call->approval_wait_ms += r.plan->approval_wait_ms;
          call->reviewed = call->reviewed || r.plan->reviewed;
          call->take_reviewer(*r.plan);
        }
        complete(call, std::move(call->result), "sandbox_denied");
        return;
      }
      admitted(call, std::move(r));
    });
    return;
  }
  std::string outcome = "success";
  if (likely_denied) outcome = "sandbox_denied";
  else if (call->result.one_shot && call->result.one_shot->cancelled) outcome = "cancelled";
  else if (call->result.one_shot && call->result.one_shot->timed_out) outcome = "process_error";
  else if (signaled) outcome = "process_error";
  complete(call, std::move(call->result), outcome);
}

void CommandRunner::complete(std::shared_ptr<CallState> call, CommandResult result, const std::string& outcome) {
  if (call->handle->finished_) return;
  call->handle->finished_ = true;
  if (call->handle->gone_ && outcome != "dry_run") {
    // Recorded for the audit trail; the client is no longer there to read the result.
  }
  AuditRecord record;
  record.tool = call->request.tool == Tool::kUnifiedExec ? "exec_command" : "shell_command";
  record.agent_id = call->request.caller.agent_id;
  record.uid = call->request.caller.uid;
  record.turn_id = call->request.turn_id;
  record.call_id = call->request.call_id;
  const ExecPlan* plan = result.plan.get();
  record.approval_policy = plan ? policy::approval_policy_name(plan->approval_policy) : "";
  record.requirement = plan && plan->assessed ? requirement_name(plan->requirement) : "none";
  record.reviewed = call->reviewed;
  record.reviewer_uid = call->reviewer_uid;
  record.reviewer_agent = call->reviewer_agent;
  record.decision = result.rejection ? rejection_reason_name(result.rejection->reason) : std::string(to_string(call->review));
  record.sandbox_override = plan && plan->escalation_downgraded ? "escalation_downgraded"
                            : plan && plan->sandbox_bypassed() ? "bypass"
                                                               : "none";
  record.initial_sandbox = call->initial_sandbox.empty() ? "none" : call->initial_sandbox;
  record.attempt = plan && plan->attempt > 1 ? "escalated" : "first";
  record.outcome = call->handle->gone_ && outcome != "rejected" && !result.unified ? "cancelled" : outcome;
  if (result.unified && result.unified->exit_code) {
    record.exit_code = *result.unified->exit_code;
    if (result.unified->termination) record.termination = limits::termination_name(*result.unified->termination);
    record.usage = result.unified->usage;
  }
  if (result.one_shot) {
    record.exit_code = result.one_shot->exit_code;
    record.termination = limits::termination_name(result.one_shot->termination);
    record.usage = result.one_shot->usage;
  }
  record.approval_wait_ms = call->approval_wait_ms;
  ++metrics_.calls[{record.decision, record.outcome}];
  if (call->reviewed) metrics_.approval_wait_seconds.observe(call->approval_wait_ms / 1000.0);
  record.duration_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - call->started).count();
  audit_.record(record);
  auto done = std::move(call->done);
  if (done) done(std::move(result));
}

}  // namespace codexd::orchestrator
