#include "daemon/orchestrator/orchestrator.h"

#include <sys/stat.h>

#include <chrono>

#include "platform/posix/spawn.h"
#include "policies/approval_key.h"

namespace codexd::orchestrator {
namespace {

using Kind = policy::ExecRequirement::Kind;

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

std::string first_justification(const policy::ExecRequirement& requirement, policy::Decision decision) {
  for (const auto& m : requirement.matched_rules) {
    if (m.decision == decision && m.justification) return *m.justification;
  }
  return {};
}

bool approved(ReviewDecision d) {
  return d == ReviewDecision::kApproved || d == ReviewDecision::kApprovedForSession ||
         d == ReviewDecision::kApprovedWithAmendment;
}

Rejection rejection_for(const ApprovalOutcome& outcome, uint32_t timeout_ms) {
  Rejection r;
  switch (outcome.kind) {
    case ApprovalOutcome::Kind::kTimedOut:
      r.reason = Rejection::Reason::kApprovalTimedOut;
      r.message = "no reviewer answered within " + std::to_string(timeout_ms) + " ms";
      break;
    case ApprovalOutcome::Kind::kNoReviewer:
      r.reason = Rejection::Reason::kNoReviewer;
      r.message = "no reviewer is watching approvals (approvals.when_no_reviewer = \"reject\")";
      break;
    case ApprovalOutcome::Kind::kRequesterGone:
      r.reason = Rejection::Reason::kAborted;
      r.message = "the requesting client disconnected";
      break;
    case ApprovalOutcome::Kind::kShutdown:
      r.reason = Rejection::Reason::kAborted;
      r.message = "codexd is shutting down";
      break;
    case ApprovalOutcome::Kind::kDecided:
      if (outcome.decision == ReviewDecision::kAbort) {
        r.reason = Rejection::Reason::kAborted;
        r.message = "the reviewer aborted the turn" + (outcome.rationale.empty() ? std::string() : ": " + outcome.rationale);
      } else {
        r.reason = Rejection::Reason::kDeniedByReviewer;
        r.message = outcome.rationale;
      }
      break;
  }
  return r;
}

}  // namespace

Orchestrator::Orchestrator(OrchestratorDeps deps) : deps_(std::move(deps)) {}

SandboxSummaryText Orchestrator::summarize(const ExecPlan& plan, const sandbox::SandboxSpec& spec, sandbox::Backend backend) {
  SandboxSummaryText s;
  s.backend = std::string(sandbox::to_string(backend));
  s.mode = std::string(sandbox::to_string(spec.mode));
  for (const auto& root : spec.writable_roots) {
    s.writable_roots.push_back(root.root);
    for (const auto& p : root.read_only_subpaths) s.protected_paths.push_back(p);
  }
  s.network_access = spec.network_access || spec.mode == sandbox::SandboxMode::kDangerFullAccess;
  s.denied_read = spec.denied_read;
  (void)plan;
  return s;
}

ApprovalTicket Orchestrator::ticket_for(const ExecPlan& plan, ApprovalReason reason) const {
  ApprovalTicket t;
  t.requester_uid = plan.request.caller.uid;
  t.agent_id = plan.request.caller.agent_id;
  t.argv = plan.request.argv;
  t.cmd = plan.request.script.value_or("");
  t.workdir = plan.request.workdir;
  t.reason = std::move(reason);
  t.matched_rules = plan.requirement.matched_rules;
  // What applies if approved: the sandbox, unless this is an escalation or a retry.
  bool unsandboxed = plan.attempt > 1 || (plan.escalation_requested && !plan.escalation_downgraded);
  t.sandbox = summarize(plan, plan.sandbox_spec,
                        unsandboxed ? sandbox::Backend::kNone : deps_.sandbox->capabilities().chosen);
  t.turn_id = plan.request.turn_id;
  t.call_id = plan.request.call_id;
  t.tty = plan.request.tty;
  if (plan.requirement.proposed_amendment) t.proposed_amendment = *plan.requirement.proposed_amendment;
  t.attempt = plan.attempt;
  return t;
}

std::shared_ptr<PendingAdmission> Orchestrator::admit(ExecRequest request, Done done) {
  auto pending = std::make_shared<PendingAdmission>();
  auto plan = std::make_shared<ExecPlan>();
  plan->request = std::move(request);
  const ExecRequest& req = plan->request;
  const config::Config& config = *deps_.config;
  auto fail = [&](Status error) {
    pending->finished = true;
    done(AdmitResult{std::move(error), std::nullopt, plan});
    return pending;
  };
  auto reject = [&](Rejection rejection) {
    pending->finished = true;
    done(AdmitResult{Status::Ok(), std::move(rejection), plan});
    return pending;
  };

  // Identity and working directory.
  const bool system_mode = config.daemon.mode == config::DaemonMode::kSystem;
  auto run_as = resolve_run_as(system_mode, req.caller.uid, config.daemon.root_runs_as);
  if (!run_as.ok()) return fail(run_as.status());
  plan->run_as = std::move(run_as).value();
  {
    Status access = system_mode
                        ? check_directory_access(req.workdir, plan->run_as.uid, plan->run_as.gid, plan->run_as.groups)
                        : check_directory_access(req.workdir, 0, 0, {});
    if (!access.ok()) {
      return fail(Status(access.code() == StatusCode::kPermissionDenied ? StatusCode::kPermissionDenied
                                                                          : StatusCode::kInvalidArgument,
                         access.message()));
    }
  }

  plan->approval_policy = deps_.config->approval_policy_for(req.caller.agent_id);
  const policy::ApprovalPolicy approval = plan->approval_policy;

  // Sandbox spec for this command (concrete roots, protected paths, masked socket directory).
  sandbox::ResolveContext context;
  context.cwd = req.workdir;
  // $TMPDIR becomes a writable root, so it comes from the daemon's environment, never from the
  // request (a caller could otherwise name any directory).
  if (auto base = deps_.base_env.find("TMPDIR"); base != deps_.base_env.end() && !system_mode) {
    context.tmpdir_env = base->second;
  }
  if (!deps_.socket_dir.empty()) context.masked_paths.push_back(deps_.socket_dir);
  auto spec = sandbox::resolve_sandbox_spec(config.sandbox.policy, context);
  if (!spec.ok()) {
    return reject({Rejection::Reason::kSandboxUnavailable, "cannot build the sandbox: " + spec.status().message(), {}});
  }
  plan->sandbox_spec = std::move(spec).value();

  // Escalation guard first: a policy that cannot grant escalation rejects the request as asked,
  // whatever the sandbox would later make of it.
  plan->escalation_requested = req.require_escalated;
  if (req.require_escalated) {
    bool allowed = approval.kind == policy::ApprovalPolicyKind::kOnRequest ||
                   (approval.kind == policy::ApprovalPolicyKind::kGranular && approval.sandbox_approval);
    if (!allowed) {
      return reject({Rejection::Reason::kEscalationNotAllowed, policy::escalation_not_allowed_message(approval), {}});
    }
  }
  // Denied-read paths are enforced only by the sandbox, so they keep it.
  bool escalate = req.require_escalated;
  if (escalate && plan->sandbox_spec.has_denied_reads()) {
    escalate = false;
    plan->escalation_downgraded = true;
  }

  // Policy: rules per segment, heuristics for the rest, strictest wins.
  policy::ExecRequest assess;
  assess.argv = req.argv;
  assess.approval = approval;
  assess.filesystem = plan->sandbox_spec.mode == sandbox::SandboxMode::kDangerFullAccess
                          ? policy::FilesystemPolicyKind::kUnrestricted
                          : policy::FilesystemPolicyKind::kRestricted;
  assess.sandbox_override_requested = escalate;
  if (!req.prefix_rule.empty()) assess.proposed_prefix_rule = req.prefix_rule;
  assess.cwd = req.workdir;
  assess.home = plan->run_as.home;
  auto snapshot = deps_.policies->current();
  plan->requirement = policy::assess_exec(*snapshot, assess);
  plan->assessed = true;

  if (plan->requirement.kind == Kind::kForbidden) {
    return reject({Rejection::Reason::kForbiddenByPolicy, plan->requirement.reason,
                   first_justification(plan->requirement, policy::Decision::kForbidden)});
  }

  // Approval-cache key (Codex: canonical command, cwd, tty, sandbox permissions).
  ApprovalKeyInput key;
  key.argv = policy::canonicalize_command_for_approval(req.argv);
  key.cwd = req.workdir;
  key.tty = req.tty;
  key.include_tty = req.tool == Tool::kUnifiedExec;
  key.require_escalated = escalate;
  plan->approval_cache_keys = {approval_cache_key(key)};

  if (plan->requirement.kind == Kind::kNeedsApproval) {
    if (req.dry_run) {
      plan->review = "dry_run";
    } else {
      bool cached = true;
      for (const auto& k : plan->approval_cache_keys) cached = cached && deps_.cache->is_approved(req.caller.uid, req.caller.agent_id, k);
      if (cached) {
        plan->review = "cached";
      } else {
        ApprovalReason reason;
        reason.message = plan->requirement.reason;
        if (escalate) {
          reason.kind = ApprovalReason::Kind::kEscalation;
          reason.justification = req.justification;
        } else {
          bool from_rule = false;
          for (const auto& m : plan->requirement.matched_rules) from_rule = from_rule || (!m.heuristic && m.decision == policy::Decision::kPrompt);
          reason.kind = from_rule ? ApprovalReason::Kind::kPromptRule : ApprovalReason::Kind::kHeuristic;
          reason.justification = from_rule ? first_justification(plan->requirement, policy::Decision::kPrompt) : req.justification;
        }
        plan->reviewed = true;
        const auto asked_at = std::chrono::steady_clock::now();
        const uint32_t timeout_ms = config.approvals.timeout_ms;
        std::weak_ptr<PendingAdmission> weak = pending;
        pending->approval_id = deps_.broker->request(
            ticket_for(*plan, std::move(reason)),
            [this, plan, done, weak, asked_at, timeout_ms](const ApprovalOutcome& outcome) {
              plan->approval_wait_ms = ms_since(asked_at);
              if (auto p = weak.lock()) p->approval_id.clear();
              if (outcome.kind != ApprovalOutcome::Kind::kDecided || !approved(outcome.decision)) {
                if (auto p = weak.lock()) p->finished = true;
                done(AdmitResult{Status::Ok(), rejection_for(outcome, timeout_ms), plan});
                return;
              }
              if (auto p = weak.lock()) p->finished = true;
              record_approval(*plan, outcome.decision, [this, plan, done] { after_approval(plan, done); });
            });
        return pending;
      }
    }
  }
  pending->finished = true;
  after_approval(plan, std::move(done));
  return pending;
}

void Orchestrator::record_approval(ExecPlan& plan, ReviewDecision decision, std::function<void()> then) {
  plan.review = review_decision_name(decision);
  if (decision == ReviewDecision::kApprovedForSession) {
    for (const auto& k : plan.approval_cache_keys) deps_.cache->approve(plan.request.caller.uid, plan.request.caller.agent_id, k);
  }
  if (decision == ReviewDecision::kApprovedWithAmendment) {
    const auto& amendment = plan.requirement.proposed_amendment;
    if (amendment && !amendment->empty() && deps_.amend_policy) {
      // The rule is in force before the approved command runs: when its answer arrives, the
      // same prefix already runs without a prompt.
      deps_.amend_policy(*amendment, std::move(then));
      return;
    }
    plan.review = review_decision_name(ReviewDecision::kApproved);  // nothing to remember
  }
  then();
}

void Orchestrator::abandon(const std::shared_ptr<PendingAdmission>& pending) {
  if (!pending || pending->finished || pending->approval_id.empty()) return;
  deps_.broker->abandon(pending->approval_id);
}

void Orchestrator::after_approval(std::shared_ptr<ExecPlan> plan, Done done) {
  const bool escalate = plan->escalation_requested && !plan->escalation_downgraded;
  const bool full_access = plan->sandbox_spec.mode == sandbox::SandboxMode::kDangerFullAccess;
  // An approval alone never lifts the sandbox: only an explicit allow of every segment or an
  // approved escalation does, and never when denied-read paths must stay enforced.
  bool bypass = !plan->sandbox_spec.has_denied_reads() &&
                ((plan->requirement.kind == Kind::kSkip && plan->requirement.bypass_sandbox) || escalate);
  plan->sandbox_bypassed = bypass && !full_access;
  std::optional<Rejection> rejection;
  Status st = build_launch(*plan, rejection);
  if (!st.ok()) {
    done(AdmitResult{st, std::nullopt, plan});
    return;
  }
  if (rejection) {
    done(AdmitResult{Status::Ok(), std::move(rejection), plan});
    return;
  }
  done(AdmitResult{Status::Ok(), std::nullopt, plan});
}

Status Orchestrator::build_launch(ExecPlan& plan, std::optional<Rejection>& rejection) const {
  const config::Config& config = *deps_.config;
  const ExecRequest& req = plan.request;
  const bool system_mode = config.daemon.mode == config::DaemonMode::kSystem;

  exec::EnvironmentInputs inputs;
  if (system_mode) {
    inputs.base = {{"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
                   {"SHELL", plan.run_as.shell}, {"LANG", "C.UTF-8"}};
  } else {
    inputs.base = deps_.base_env;
  }
  inputs.request = req.env;
  inputs.unified_exec = req.tool == Tool::kUnifiedExec;
  inputs.forced = plan.run_as.forced_env;
  std::vector<std::string> env = exec::build_child_environment(config.environment, inputs);

  plan.launch = {};
  plan.launch.tty = req.tty;
  plan.launch.rows = req.rows;
  plan.launch.cols = req.cols;
  plan.launch.run_as = plan.run_as.credentials;

  const bool unsandboxed = plan.sandbox_bypassed || plan.sandbox_spec.mode == sandbox::SandboxMode::kDangerFullAccess;
  if (unsandboxed) {
    auto executable = posix::resolve_executable(req.argv.front(), env, req.workdir);
    if (!executable.ok()) {
      rejection = Rejection{Rejection::Reason::kSpawnFailed, executable.status().message(), {}};
      return Status::Ok();
    }
    plan.backend = sandbox::Backend::kNone;
    plan.launch.executable = *executable;
    plan.launch.argv = req.argv;
    plan.launch.env = std::move(env);
    plan.launch.cwd = req.workdir;
    plan.launch.sandbox = "none";
    plan.sandbox_rules = {plan.sandbox_bypassed ? "no sandbox: bypassed for this command" : "no sandbox: danger-full-access"};
    return Status::Ok();
  }

  sandbox::LaunchRequest launch_request{req.argv, req.workdir, std::move(env), req.tty};
  auto launch = deps_.sandbox->plan(plan.sandbox_spec, launch_request);
  if (!launch.ok()) {
    // Never fall back to running unsandboxed.
    rejection = Rejection{Rejection::Reason::kSandboxUnavailable, launch.status().message(), {}};
    return Status::Ok();
  }
  plan.backend = launch->backend;
  plan.sandbox_rules = launch->rules;
  plan.launch.executable = launch->argv.front();
  plan.launch.argv = launch->argv;
  plan.launch.env = launch->env;
  plan.launch.cwd = launch->cwd.empty() ? req.workdir : launch->cwd;
  plan.launch.sandbox = std::string(sandbox::to_string(launch->backend));
  return Status::Ok();
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
  auto run = [this, plan](Done& d) {
    plan->sandbox_bypassed = true;
    std::optional<Rejection> rejection;
    Status st = build_launch(*plan, rejection);
    d(AdmitResult{st, rejection, plan});
  };
  // Codex: no second question when a reviewer already approved attempt 1 (not one-shot).
  bool already_approved = first->review == "approved" || first->review == "approved_for_session" ||
                          first->review == "approved_execpolicy_amendment" || first->review == "cached";
  bool cached = true;
  for (const auto& k : plan->approval_cache_keys) cached = cached && deps_.cache->is_approved(plan->request.caller.uid, plan->request.caller.agent_id, k);
  if (already_approved || cached) {
    if (cached && !already_approved) plan->review = "cached";
    pending->finished = true;
    run(done);
    return pending;
  }
  ApprovalReason reason{ApprovalReason::Kind::kSandboxRetry, "command failed in the sandbox; retry without it?", {}};
  plan->reviewed = true;
  const auto asked_at = std::chrono::steady_clock::now();
  const uint32_t timeout_ms = deps_.config->approvals.timeout_ms;
  std::weak_ptr<PendingAdmission> weak = pending;
  pending->approval_id = deps_.broker->request(
      ticket_for(*plan, std::move(reason)),
      [this, plan, done, weak, asked_at, timeout_ms, run](const ApprovalOutcome& outcome) mutable {
        plan->approval_wait_ms = ms_since(asked_at);
        if (auto p = weak.lock()) {
          p->approval_id.clear();
          p->finished = true;
        }
        if (outcome.kind != ApprovalOutcome::Kind::kDecided || !approved(outcome.decision)) {
          done(AdmitResult{Status::Ok(), rejection_for(outcome, timeout_ms), plan});
          return;
        }
        record_approval(*plan, outcome.decision, [run, done]() mutable { run(done); });
      });
  return pending;
}

}  // namespace codexd::orchestrator
