#include "daemon/orchestrator/admission_steps.h"

#include "daemon/orchestrator/approval_cache.h"
#include "policies/approval_key.h"

namespace codexd::orchestrator {

std::optional<Escalation> check_escalation(bool require_escalated, const policy::ApprovalPolicy& approval,
                                           const sandbox::SandboxSpec& spec) {
  Escalation escalation;
  if (!require_escalated) return escalation;
  bool grantable = approval.kind == policy::ApprovalPolicyKind::kOnRequest ||
                   (approval.kind == policy::ApprovalPolicyKind::kGranular && approval.sandbox_approval);
  if (!grantable) return std::nullopt;
  escalation.requested = true;
  escalation.downgraded = spec.has_denied_reads();
  return escalation;
}

policy::ExecRequest policy_question(const ExecPlan& plan) {
  policy::ExecRequest question;
  question.argv = plan.request.argv;
  question.approval = plan.approval_policy;
  question.filesystem = plan.sandbox_spec.mode == sandbox::SandboxMode::kDangerFullAccess
                            ? policy::FilesystemPolicyKind::kUnrestricted
                            : policy::FilesystemPolicyKind::kRestricted;
  question.sandbox_override_requested = plan.escalates();
  if (!plan.request.prefix_rule.empty()) question.proposed_prefix_rule = plan.request.prefix_rule;
  question.cwd = plan.request.workdir;
  question.home = plan.run_as.home;
  return question;
}

std::vector<std::string> approval_cache_keys(const ExecRequest& request, bool escalates) {
  ApprovalKeyInput key;
  key.argv = policy::canonicalize_command_for_approval(request.argv);
  key.cwd = request.workdir;
  key.tty = request.tty;
  key.include_tty = request.tool == Tool::kUnifiedExec;
  key.require_escalated = escalates;
  return {approval_cache_key(key)};
}

Confinement choose_confinement(const ExecPlan& plan) {
  if (plan.sandbox_spec.mode == sandbox::SandboxMode::kDangerFullAccess) return Confinement::kFullAccess;
  if (plan.sandbox_spec.has_denied_reads()) return Confinement::kSandboxed;
  const bool explicit_allow =
      plan.requirement.kind == policy::ExecRequirement::Kind::kSkip && plan.requirement.bypass_sandbox;
  return explicit_allow || plan.escalates() ? Confinement::kBypassed : Confinement::kSandboxed;
}

std::string first_justification(const policy::ExecRequirement& requirement, policy::Decision decision) {
  for (const auto& m : requirement.matched_rules) {
    if (m.decision == decision && m.justification) return *m.justification;
  }
  return {};
}

bool is_approval_decision(ReviewDecision decision) {
  return decision == ReviewDecision::kApproved || decision == ReviewDecision::kApprovedForSession ||
         decision == ReviewDecision::kApprovedWithAmendment;
}

ReviewOutcome review_outcome_of(ReviewDecision approved) {
  switch (approved) {
    case ReviewDecision::kApprovedForSession: return ReviewOutcome::kApprovedForSession;
    case ReviewDecision::kApprovedWithAmendment: return ReviewOutcome::kApprovedWithAmendment;
    default: return ReviewOutcome::kApproved;
  }
}

Rejection rejection_for(const ApprovalOutcome& outcome, uint32_t timeout_ms) {
  using Kind = ApprovalOutcome::Kind;
  using Reason = Rejection::Reason;
  switch (outcome.kind) {
    case Kind::kTimedOut:
      return {Reason::kApprovalTimedOut, "no reviewer answered within " + std::to_string(timeout_ms) + " ms", {}};
    case Kind::kNoReviewer:
      return {Reason::kNoReviewer, "no reviewer is watching approvals (approvals.when_no_reviewer = \"reject\")", {}};
    case Kind::kRequesterGone: return {Reason::kAborted, "the requesting client disconnected", {}};
    case Kind::kShutdown: return {Reason::kAborted, "codexd is shutting down", {}};
    case Kind::kDecided: break;
  }
  if (outcome.decision == ReviewDecision::kAbort) {
    return {Reason::kAborted,
            "the reviewer aborted the turn" + (outcome.rationale.empty() ? std::string() : ": " + outcome.rationale), {}};
  }
  return {Reason::kDeniedByReviewer, outcome.rationale, {}};
}

}  // namespace codexd::orchestrator
