// Admission: request validated -> policy -> approval -> sandbox choice -> launch plan. The
// ProcessStore then spawns what the plan says. After a sandboxed attempt that looks denied by
// the sandbox, the orchestrator decides whether a second, unsandboxed attempt may run.
// Runs on the core io thread; an approval wait is a callback in the broker, not a thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "daemon/config/config.h"
#include "daemon/exec/environment.h"
#include "daemon/orchestrator/approval_broker.h"
#include "daemon/orchestrator/approval_cache.h"
#include "daemon/orchestrator/exec_plan.h"
#include "daemon/orchestrator/policy_store.h"
#include "platform/sandbox/sandbox.h"

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
  const sandbox::SandboxManager* sandbox = nullptr;
  ApprovalBroker* broker = nullptr;
  ApprovalCache* cache = nullptr;
  exec::EnvMap base_env;     // what `inherit` starts from in user mode
  std::string socket_dir;    // hidden from sandboxed commands
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
  // Asks the reviewer (unless the first attempt was already reviewer-approved or the key is
  // approved for the session), then plans attempt 2 without the sandbox.
  std::shared_ptr<PendingAdmission> plan_retry(std::shared_ptr<const ExecPlan> first, Done done);

  // The sandbox summary reviewers see.
  static SandboxSummaryText summarize(const ExecPlan& plan, const sandbox::SandboxSpec& spec, sandbox::Backend backend);

 private:
  void after_approval(std::shared_ptr<ExecPlan> plan, Done done);
  // A reviewer approved: note it on the plan, remember it for the session, or amend the rules.
  // Records the reviewer's answer; `then` continues once it is in effect.
  void record_approval(ExecPlan& plan, ReviewDecision decision, std::function<void()> then);
  Status build_launch(ExecPlan& plan, std::optional<Rejection>& rejection) const;
  ApprovalTicket ticket_for(const ExecPlan& plan, ApprovalReason reason) const;

  OrchestratorDeps deps_;
};

}  // namespace codexd::orchestrator
