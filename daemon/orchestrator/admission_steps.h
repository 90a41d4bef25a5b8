// The decisions of admission that need nothing but their inputs: escalation guard, the policy
// question, approval-cache keys, confinement, and the rejection for an approval outcome. Pure
// functions, so each is unit-tested on its own (tests/orchestrator).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "daemon/orchestrator/approval_types.h"
#include "daemon/orchestrator/exec_plan.h"
#include "policies/requirement.h"

namespace codexd::orchestrator {

// require_escalated under a policy that can grant it (on-request; granular with sandbox
// approval) is asked for; denied-read paths are enforced only by the sandbox, so they
// downgrade it. nullopt: the policy cannot grant escalation (reject as asked).
struct Escalation {
  bool requested = false;
  bool downgraded = false;
};
std::optional<Escalation> check_escalation(bool require_escalated, const policy::ApprovalPolicy& approval,
                                           const sandbox::SandboxSpec& spec);

// What the policy engine is asked about this plan's command.
policy::ExecRequest policy_question(const ExecPlan& plan);

// Codex's approval-cache key: canonical command, cwd, tty (unified exec), escalation.
std::vector<std::string> approval_cache_keys(const ExecRequest& request, bool escalates);

// An approval alone never lifts the sandbox: only an explicit allow of every segment or an
// approved escalation does, and never while denied-read paths must stay enforced.
Confinement choose_confinement(const ExecPlan& plan);

// The first matched rule's justification with `decision`, if any.
std::string first_justification(const policy::ExecRequirement& requirement, policy::Decision decision);

bool is_approval_decision(ReviewDecision decision);
ReviewOutcome review_outcome_of(ReviewDecision approved);

// Why nothing runs after an approval that did not approve.
Rejection rejection_for(const ApprovalOutcome& outcome, uint32_t timeout_ms);

}  // namespace codexd::orchestrator
