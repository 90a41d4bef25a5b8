#include "daemon/orchestrator/orchestrator.h"

#include <chrono>

#include "daemon/orchestrator/admission_steps.h"

namespace codexd::orchestrator {
namespace {

using Kind = policy::ExecRequirement::Kind;

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

LaunchInput launch_input(const ExecRequest& request) {
  LaunchInput input;
  input.argv = request.argv;
  input.workdir = request.workdir;
  input.env = request.env;
  input.unified_exec = request.tool == Tool::kUnifiedExec;
  input.tty = request.tty;
  input.rows = request.rows;
  input.cols = request.cols;
  input.agent_id = request.caller.agent_id;
  input.limits = request.limits;
  return input;
}

}  // namespace

Orchestrator::Orchestrator(OrchestratorDeps deps) : deps_(std::move(deps)) {}

SandboxSummaryText Orchestrator::summarize(const sandbox::SandboxSpec& spec, sandbox::Backend backend) {
  SandboxSummaryText s;
  s.backend = std::string(sandbox::to_string(backend));
  s.mode = std::string(sandbox::to_string(spec.mode));
  for (const auto& root : spec.writable_roots) {
    s.writable_roots.push_back(root.root);
    for (const auto& p : root.read_only_subpaths) s.protected_paths.push_back(p);
  }
  s.network = spec.mode == sandbox::SandboxMode::kDangerFullAccess ? sandbox::NetworkMode::kHost : spec.network;
  s.denied_read = spec.denied_read;
  return s;
}

ApprovalTicket Orchestrator::ticket_for(const ExecPlan& plan, ApprovalReason reason) const {
  ApprovalTicket t;
  t.requester_uid = plan.request.caller.uid;
  t.agent_id = plan.request.caller.agent_id;
  t.argv = plan.request.argv;
  t.cmd = plan.request.script() ? *plan.request.script() : std::string();
  t.workdir = plan.request.workdir;
  t.reason = std::move(reason);
  t.matched_rules = plan.requirement.matched_rules;
  // What applies if approved: the sandbox, unless this is an escalation or a retry.
  const bool unsandboxed = plan.attempt > 1 || plan.escalates();
  t.sandbox = summarize(plan.sandbox_spec,
                        unsandboxed ? sandbox::Backend::kNone : deps_.launches->sandbox().capabilities().chosen);
  t.turn_id = plan.request.turn_id;
  t.call_id = plan.request.call_id;
  t.tty = plan.request.tty;
  if (plan.requirement.proposed_amendment) t.proposed_amendment = *plan.requirement.proposed_amendment;
  t.attempt = plan.attempt;
  return t;
}

// Stages 1-3: identity, sandbox, policy (with the escalation guard and the forbidden check).
std::optional<Orchestrator::Stop> Orchestrator::resolve_and_assess(ExecPlan& plan) const {
  const ExecRequest& req = plan.request;
  const LaunchBuilder& launches = *deps_.launches;

  auto run_as = launches.resolve_identity(req.caller.uid, req.workdir);
  if (!run_as.ok()) return Stop{run_as.status(), std::nullopt};
  plan.run_as = std::move(run_as).value();
  plan.approval_policy = deps_.config->approval_policy_for(req.caller.agent_id);

  auto spec = launches.resolve_sandbox(launches.configured_policy_for(req.caller.agent_id), req.workdir,
                                       plan.run_as, req.caller.agent_id);
  if (!spec.ok()) {
    return Stop{Status::Ok(), Rejection{Rejection::Reason::kSandboxUnavailable,
                                        "cannot build the sandbox: " + spec.status().message(), {}}};
  }
  plan.sandbox_spec = std::move(spec).value();

  // The escalation guard comes first: a policy that cannot grant escalation rejects the
  // request as asked, whatever the sandbox would later make of it.
  plan.escalation_requested = req.require_escalated;
  auto escalation = check_escalation(req.require_escalated, plan.approval_policy, plan.sandbox_spec);
  if (!escalation) {
    return Stop{Status::Ok(), Rejection{Rejection::Reason::kEscalationNotAllowed,
                                        policy::escalation_not_allowed_message(plan.approval_policy), {}}};
  }
  plan.escalation_downgraded = escalation->downgraded;

  plan.requirement = policy::assess_exec(*deps_.policies->current(), policy_question(plan));
  plan.assessed = true;
  if (plan.requirement.kind == Kind::kForbidden) {
    return Stop{Status::Ok(), Rejection{Rejection::Reason::kForbiddenByPolicy, plan.requirement.reason,
                                        first_justification(plan.requirement, policy::Decision::kForbidden)}};
  }
  return std::nullopt;
}

bool Orchestrator::approved_for_session(const ExecPlan& plan) const {
  // The keys are made when asked for, not kept in the plan: each holds the whole command, and
  // a plan may wait for a reviewer for long (issue 19 item 5).
  for (const auto& key : approval_cache_keys(plan.request, plan.escalates())) {
    if (!deps_.cache->is_approved(plan.request.caller.uid, plan.request.caller.agent_id, key)) return false;
  }
  return true;
}

// Stage 4 (the question): nullopt when no reviewer needs to be asked; the review outcome is
// set on the plan either way.
std::optional<ApprovalReason> Orchestrator::review_reason(const ExecPlan& plan) const {
  if (plan.requirement.kind != Kind::kNeedsApproval) return std::nullopt;
  ApprovalReason reason;
  reason.message = plan.requirement.reason;
  if (plan.escalates()) {
    reason.kind = ApprovalReason::Kind::kEscalation;
    reason.justification = plan.request.justification;
    return reason;
  }
  bool from_rule = false;
  for (const auto& m : plan.requirement.matched_rules) {
    from_rule = from_rule || (!m.heuristic && m.decision == policy::Decision::kPrompt);
  }
  reason.kind = from_rule ? ApprovalReason::Kind::kPromptRule : ApprovalReason::Kind::kHeuristic;
  reason.justification =
      from_rule ? first_justification(plan.requirement, policy::Decision::kPrompt) : plan.request.justification;
  return reason;
}

std::shared_ptr<PendingAdmission> Orchestrator::admit(ExecRequest request, Done done) {
  auto pending = std::make_shared<PendingAdmission>();
  auto plan = std::make_shared<ExecPlan>();
  plan->request = std::move(request);
  if (auto stop = resolve_and_assess(*plan)) {
    pending->finished = true;
    done(AdmitResult{std::move(stop->error), std::move(stop->rejection), std::move(plan)});
    return pending;
  }
  std::optional<ApprovalReason> reason = review_reason(*plan);
  if (reason && plan->request.dry_run) {
    plan->review = ReviewOutcome::kDryRun;
  } else if (reason && approved_for_session(*plan)) {
    plan->review = ReviewOutcome::kCachedForSession;
  } else if (reason) {
    ask_reviewer(plan, std::move(*reason), pending, done, [this, done](Draft approved) { finish_launch(approved, done); });
    return pending;
  }
  pending->finished = true;
  finish_launch(std::move(plan), done);
  return pending;
}

void Orchestrator::ask_reviewer(Draft plan, ApprovalReason reason, const std::shared_ptr<PendingAdmission>& pending,
                                Done done, Continue then) {
  plan->reviewed = true;
  const auto asked_at = std::chrono::steady_clock::now();
  const uint32_t timeout_ms = deps_.config->approvals.timeout_ms;
  std::weak_ptr<PendingAdmission> weak = pending;
  ApprovalTicket ticket = ticket_for(*plan, std::move(reason));
  if (Status room = deps_.broker->has_room(ticket); !room.ok()) {
    pending->finished = true;
    done(AdmitResult{std::move(room), std::nullopt, plan});
    return;
  }
  pending->approval_id = deps_.broker->request(
      std::move(ticket),
      [this, plan, done, weak, asked_at, timeout_ms, then](const ApprovalOutcome& outcome) {
        plan->approval_wait_ms = ms_since(asked_at);
        plan->reviewer_uid = outcome.resolved_by;
        plan->reviewer_agent = outcome.resolved_by_agent;
        if (auto p = weak.lock()) {
          p->approval_id.clear();
          p->finished = true;
        }
        if (outcome.kind != ApprovalOutcome::Kind::kDecided || !is_approval_decision(outcome.decision)) {
          done(AdmitResult{Status::Ok(), rejection_for(outcome, timeout_ms), plan});
          return;
        }
        record_approval(*plan, outcome.decision, [plan, then] { then(plan); });
      });
}

void Orchestrator::record_approval(ExecPlan& plan, ReviewDecision decision, std::function<void()> then) {
  plan.review = review_outcome_of(decision);
  if (decision == ReviewDecision::kApprovedForSession) {
    for (const auto& k : approval_cache_keys(plan.request, plan.escalates())) {
      deps_.cache->approve(plan.request.caller.uid, plan.request.caller.agent_id, k);
    }
  }
  if (decision == ReviewDecision::kApprovedWithAmendment) {
    const auto& amendment = plan.requirement.proposed_amendment;
    if (amendment && !amendment->empty() && deps_.amend_policy) {
      // The rule is in force before the approved command runs: when its answer arrives, the
      // same prefix already runs without a prompt.
      deps_.amend_policy(*amendment, std::move(then));
      return;
    }
    plan.review = ReviewOutcome::kApproved;  // nothing to remember
  }
  then();
}

void Orchestrator::abandon(const std::shared_ptr<PendingAdmission>& pending) {
  if (!pending || pending->finished || pending->approval_id.empty()) return;
  deps_.broker->abandon(pending->approval_id);
}

// Stages 5-6: confinement, then the exact launch. The plan is frozen here.
void Orchestrator::finish_launch(Draft plan, const Done& done) const {
  if (plan->attempt == 1) plan->confinement = choose_confinement(*plan);
  auto built = deps_.launches->build(plan->run_as, plan->sandbox_spec, plan->confinement == Confinement::kSandboxed,
                                     launch_input(plan->request));
  if (!built.ok()) {
    done(AdmitResult{Status::Ok(), launch_rejection(built.status()), std::move(plan)});
    return;
  }
  plan->backend = built->plan.backend;
  plan->sandbox_rules = built->plan.rules;
  plan->launch = std::move(built->spec);
  done(AdmitResult{Status::Ok(), std::nullopt, std::shared_ptr<const ExecPlan>(std::move(plan))});
}

bool Orchestrator::retry_allowed(const ExecPlan& first, bool likely_denied, bool timed_out, bool signaled) const {
  if (!likely_denied || timed_out || signaled) return false;
  if (first.backend == sandbox::Backend::kNone || first.attempt > 1) return false;
  if (first.sandbox_spec.has_denied_reads()) return false;
  const policy::ApprovalPolicy& approval = first.approval_policy;
  return approval.kind == policy::ApprovalPolicyKind::kUntrusted ||
         (approval.kind == policy::ApprovalPolicyKind::kGranular && approval.sandbox_approval);
}

std::shared_ptr<PendingAdmission> Orchestrator::plan_retry(std::shared_ptr<const ExecPlan> first, Done done) {
  auto pending = std::make_shared<PendingAdmission>();
  auto plan = std::make_shared<ExecPlan>(*first);
  plan->attempt = 2;
  plan->reviewed = false;
  plan->approval_wait_ms = 0;
  plan->reviewer_uid.reset();
  plan->reviewer_agent.clear();
  plan->confinement = Confinement::kBypassed;
  // Codex: no second question when attempt 1 was approved (not one-shot) or the key is
  // approved for the session.
  const bool cached = approved_for_session(*plan);
  if (is_approval(first->review) || cached) {
    if (cached && !is_approval(first->review)) plan->review = ReviewOutcome::kCachedForSession;
    pending->finished = true;
    finish_launch(std::move(plan), done);
    return pending;
  }
  ApprovalReason reason{ApprovalReason::Kind::kSandboxRetry, "command failed in the sandbox; retry without it?", {}};
  ask_reviewer(plan, std::move(reason), pending, done, [this, done](Draft approved) { finish_launch(approved, done); });
  return pending;
}

}  // namespace codexd::orchestrator
