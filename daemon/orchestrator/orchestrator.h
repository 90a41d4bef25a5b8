// Admission: a validated request becomes an immutable ExecPlan in named stages,
//   resolve identity -> resolve sandbox -> assess policy -> ask reviewer -> choose
//   confinement -> build launch,
// each returning a value; the ProcessStore then spawns what the plan says. After a sandboxed
// attempt that looks denied by the sandbox, the orchestrator decides whether a second,
// unsandboxed attempt may run (asking through the same reviewer step).
// Runs on the core io thread; an approval wait is a callback in the broker, not a thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "daemon/config/config.h"
#include "daemon/orchestrator/approval_broker.h"
#include "daemon/orchestrator/approval_cache.h"
#include "daemon/orchestrator/exec_plan.h"
#include "daemon/orchestrator/launch_builder.h"
#include "daemon/orchestrator/policy_store.h"

namespace codexd::orchestrator {

struct AdmitResult {
  Status error;                           // the call itself is wrong (bad workdir, unknown user)
  std::optional<Rejection> rejection;     // nothing runs, for a reason the caller is told
  std::shared_ptr<const ExecPlan> plan;   // set when !rejection && error.ok(); partial otherwise
};

// An admission in progress; lets the RPC abort a pending approval when its client goes away.
struct PendingAdmission {
  std::string approval_id;  // set while a reviewer is being asked
  bool finished = false;
};

struct OrchestratorDeps {
  const config::Config* config = nullptr;
  PolicyStore* policies = nullptr;
  const LaunchBuilder* launches = nullptr;
  ApprovalBroker* broker = nullptr;
  ApprovalCache* cache = nullptr;
  // "Approve and remember": appends an allow prefix rule and reloads the policy (off the core
  // thread), then calls `then` on the core thread, also when that failed (the command was
  // approved either way; the failure is logged). Unset: amendments are disabled.
  std::function<void(std::vector<std::string> prefix, std::function<void()> then)> amend_policy;
};

class Orchestrator {
 public:
  using Done = std::function<void(AdmitResult)>;

  explicit Orchestrator(OrchestratorDeps deps);

  std::shared_ptr<PendingAdmission> admit(ExecRequest request, Done done);
  void abandon(const std::shared_ptr<PendingAdmission>& pending);

  // Codex's retry rule: a sandboxed attempt that failed like a sandbox denial (not a timeout,
  // not a signal) may run again without the sandbox when the approval policy wants sandbox
  // escalations approved (untrusted; granular with sandbox approval) and no denied-read path
  // forbids running unsandboxed.
  bool retry_allowed(const ExecPlan& first, bool likely_denied, bool timed_out, bool signaled) const;
  // Asks the reviewer (unless the first attempt was already approved, or its key is approved
  // for the session), then plans attempt 2 without the sandbox.
  std::shared_ptr<PendingAdmission> plan_retry(std::shared_ptr<const ExecPlan> first, Done done);

  // The sandbox summary reviewers see.
  static SandboxSummaryText summarize(const sandbox::SandboxSpec& spec, sandbox::Backend backend);

 private:
  using Draft = std::shared_ptr<ExecPlan>;  // a plan under construction, owned by one admission
  using Continue = std::function<void(Draft)>;

  // The stages that need no one: identity, sandbox, policy. A stop is an error or a rejection.
  struct Stop {
    Status error = Status::Ok();
    std::optional<Rejection> rejection;
  };
  std::optional<Stop> resolve_and_assess(ExecPlan& plan) const;
  // The reviewer's question, if this attempt needs one.
  std::optional<ApprovalReason> review_reason(const ExecPlan& plan) const;
  // Asks the reviewer; on approval records the answer (session cache, rules amendment) and
  // continues with `then`; otherwise ends the admission with the matching rejection.
  void ask_reviewer(Draft plan, ApprovalReason reason, const std::shared_ptr<PendingAdmission>& pending,
                    Done done, Continue then);
  void record_approval(ExecPlan& plan, ReviewDecision decision, std::function<void()> then);
  // Confinement and launch; the last stage, which freezes the plan.
  void finish_launch(Draft plan, const Done& done) const;
  bool approved_for_session(const ExecPlan& plan) const;
  ApprovalTicket ticket_for(const ExecPlan& plan, ApprovalReason reason) const;
  OrchestratorDeps deps_;
};

}  // namespace codexd::orchestrator
