#include "daemon/server/proto_convert.h"

#include <chrono>

#include "base/utf8.h"

namespace codexd::server {
namespace {

int64_t unix_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

int64_t unix_ms_from_steady(std::chrono::steady_clock::time_point t) {
  auto delta = t - std::chrono::steady_clock::now();
  return unix_ms(std::chrono::system_clock::now() + std::chrono::duration_cast<std::chrono::system_clock::duration>(delta));
}

v1::Rejection::Reason to_proto(orchestrator::Rejection::Reason reason) {
  using R = orchestrator::Rejection::Reason;
  switch (reason) {
    case R::kForbiddenByPolicy: return v1::Rejection::FORBIDDEN_BY_POLICY;
    case R::kDeniedByReviewer: return v1::Rejection::DENIED_BY_REVIEWER;
    case R::kAborted: return v1::Rejection::ABORTED;
    case R::kApprovalTimedOut: return v1::Rejection::APPROVAL_TIMED_OUT;
    case R::kNoReviewer: return v1::Rejection::NO_REVIEWER;
    case R::kSpawnFailed: return v1::Rejection::SPAWN_FAILED;
    case R::kSandboxUnavailable: return v1::Rejection::SANDBOX_UNAVAILABLE;
    case R::kEscalationNotAllowed: return v1::Rejection::ESCALATION_NOT_ALLOWED;
  }
  return v1::Rejection::REASON_UNSPECIFIED;
}

v1::ApprovalReason::Kind to_proto(orchestrator::ApprovalReason::Kind kind) {
  using K = orchestrator::ApprovalReason::Kind;
  switch (kind) {
    case K::kPromptRule: return v1::ApprovalReason::PROMPT_RULE;
    case K::kHeuristic: return v1::ApprovalReason::HEURISTIC;
    case K::kEscalation: return v1::ApprovalReason::ESCALATION;
    case K::kSandboxRetry: return v1::ApprovalReason::SANDBOX_RETRY;
    case K::kNetwork: return v1::ApprovalReason::NETWORK;
  }
  return v1::ApprovalReason::KIND_UNSPECIFIED;
}

v1::ReviewDecision to_proto(orchestrator::ReviewDecision decision) {
  using D = orchestrator::ReviewDecision;
  switch (decision) {
    case D::kApproved: return v1::APPROVED;
    case D::kApprovedForSession: return v1::APPROVED_FOR_SESSION;
    case D::kDenied: return v1::DENIED;
    case D::kAbort: return v1::ABORT;
    case D::kApprovedWithAmendment: return v1::APPROVED_EXECPOLICY_AMENDMENT;
  }
  return v1::REVIEW_DECISION_UNSPECIFIED;
}

}  // namespace

v1::SandboxBackend to_proto(sandbox::Backend backend) {
  switch (backend) {
    case sandbox::Backend::kNone: return v1::SANDBOX_NONE;
    case sandbox::Backend::kLinuxBwrap: return v1::SANDBOX_LINUX_BWRAP;
    case sandbox::Backend::kLinuxLandlock: return v1::SANDBOX_LINUX_LANDLOCK;
    case sandbox::Backend::kMacosSeatbelt: return v1::SANDBOX_MACOS_SEATBELT;
    case sandbox::Backend::kWindowsRestrictedToken: return v1::SANDBOX_WINDOWS_RESTRICTED_TOKEN;
  }
  return v1::SANDBOX_NONE;
}

v1::SandboxBackend backend_to_proto(std::string_view name) {
  for (sandbox::Backend backend : {sandbox::Backend::kNone, sandbox::Backend::kLinuxBwrap, sandbox::Backend::kLinuxLandlock,
                                   sandbox::Backend::kMacosSeatbelt, sandbox::Backend::kWindowsRestrictedToken}) {
    if (sandbox::to_string(backend) == name) return to_proto(backend);
  }
  return v1::SANDBOX_NONE;
}

v1::Decision to_proto(policy::Decision decision) {
  switch (decision) {
    case policy::Decision::kAllow: return v1::ALLOW;
    case policy::Decision::kPrompt: return v1::PROMPT;
    case policy::Decision::kForbidden: return v1::FORBIDDEN;
  }
  return v1::DECISION_UNSPECIFIED;
}

void fill_rule_match(const policy::RuleMatch& match, v1::RuleMatch* out) {
  for (const auto& t : match.matched_prefix) out->add_matched_prefix(t);
  out->set_decision(to_proto(match.decision));
  if (match.resolved_program) out->set_resolved_program(*match.resolved_program);
  if (match.justification) out->set_justification(*match.justification);
  out->set_heuristic(match.heuristic);
  out->set_source(match.source);
}

void fill_requirement(const policy::ExecRequirement& requirement, v1::ApprovalRequirement* out) {
  switch (requirement.kind) {
    case policy::ExecRequirement::Kind::kSkip: out->set_kind(v1::ApprovalRequirement::SKIP); break;
    case policy::ExecRequirement::Kind::kNeedsApproval: out->set_kind(v1::ApprovalRequirement::NEEDS_APPROVAL); break;
    case policy::ExecRequirement::Kind::kForbidden: out->set_kind(v1::ApprovalRequirement::FORBIDDEN); break;
  }
  out->set_bypass_sandbox(requirement.bypass_sandbox);
  out->set_reason(requirement.reason);
  if (requirement.proposed_amendment) {
    for (const auto& t : *requirement.proposed_amendment) out->add_proposed_amendment(t);
  }
}

static void fill_sandbox_summary(const orchestrator::SandboxSummaryText& s, v1::SandboxSummary* out) {
  out->set_mode(s.mode);
  for (const auto& r : s.writable_roots) out->add_writable_roots(r);
  out->set_network_access(s.network != sandbox::NetworkMode::kOff);
  out->set_network_mode(std::string(sandbox::to_string(s.network)));
  for (const auto& p : s.denied_read) out->add_denied_read(p);
  for (const auto& p : s.protected_paths) out->add_protected_paths(p);
}

void fill_sandbox_summary(const sandbox::SandboxSpec& spec, sandbox::Backend backend, v1::SandboxSummary* out) {
  fill_sandbox_summary(orchestrator::Orchestrator::summarize(spec, backend), out);
  out->set_backend(to_proto(backend));
}

void fill_plan(const orchestrator::ExecPlan& plan, v1::ExecPlan* out) {
  for (const auto& a : plan.request.argv) out->add_argv(a);
  out->set_workdir(plan.request.workdir);
  for (const auto& e : plan.launch.env) out->add_env(e);
  out->set_tty(plan.request.tty);
  for (const auto& m : plan.requirement.matched_rules) fill_rule_match(m, out->add_matched_rules());
  fill_requirement(plan.requirement, out->mutable_requirement());
  out->set_approval_policy(policy::approval_policy_name(plan.approval_policy));
  fill_sandbox_summary(plan.sandbox_spec, plan.backend, out->mutable_sandbox());
  for (const auto& a : plan.launch.argv) out->add_launch_argv(a);
  for (const auto& r : plan.sandbox_rules) out->add_sandbox_rules(r);
  out->set_run_as_uid(plan.run_as.uid);
  out->set_run_as_gid(plan.run_as.gid);
}

void fill_rejection(const orchestrator::ExecRequest& request, const orchestrator::Rejection& rejection,
                    v1::Rejection* out, std::string* model_text) {
  out->set_reason(to_proto(rejection.reason));
  out->set_message(rejection.message);
  out->set_justification(rejection.justification);
  if (model_text) *model_text = orchestrator::rejection_model_text(request, rejection);
}

v1::Termination to_proto(limits::Termination t) {
  switch (t) {
    case limits::Termination::kExited: return v1::EXITED;
    case limits::Termination::kSignalled: return v1::SIGNALLED;
    case limits::Termination::kTimedOut: return v1::TIMED_OUT;
    case limits::Termination::kCancelled: return v1::CANCELLED;
    case limits::Termination::kOutOfMemory: return v1::OUT_OF_MEMORY;
    case limits::Termination::kProcessLimit: return v1::PROCESS_LIMIT;
  }
  return v1::TERMINATION_UNSPECIFIED;
}

void fill_usage(const limits::ResourceUsage& usage, v1::ResourceUsage* out) {
  out->set_measured(usage.known);
  out->set_peak_memory_bytes(usage.peak_memory_bytes);
  out->set_cpu_user_usec(usage.cpu_user_usec);
  out->set_cpu_system_usec(usage.cpu_system_usec);
  out->set_peak_processes(usage.peak_processes);
}

void fill_limits_status(const limits::MechanismStatus& status, v1::LimitsStatus* out) {
  out->set_mechanism(limits::mechanism_name(status.mechanism));
  out->set_reason(status.reason);
  for (const auto& c : status.controllers) out->add_controllers(c);
  out->set_root(status.root);
  out->set_whole_tree_kill(status.whole_tree_kill);
  out->set_accounting(status.accounting);
  for (const auto& w : status.warnings) out->add_warnings(w);
}

void fill_exec_result(const exec::UnifiedOutcome& outcome, v1::ExecResult* out) {
  out->set_chunk_id(outcome.chunk_id);
  out->set_wall_time_seconds(outcome.wall_time_seconds);
  if (outcome.exit_code) out->set_exit_code(*outcome.exit_code);
  if (outcome.signal) out->set_signal(*outcome.signal);
  if (outcome.session_id) out->set_session_id(*outcome.session_id);
  out->set_output(outcome.output);
  out->set_original_token_count(outcome.original_token_count);
  out->set_output_offset(outcome.output_offset);
  out->set_lost_bytes(outcome.lost_bytes);
  out->set_text(outcome.text);
  for (const auto& w : outcome.warnings) out->add_warnings(w);
  if (outcome.termination) out->set_termination(to_proto(*outcome.termination));
  fill_usage(outcome.usage, out->mutable_usage());
  out->set_sandbox(to_proto(outcome.sandbox));
}

void fill_exec_result(const orchestrator::CommandResult& result, v1::ExecResult* out) {
  out->set_sandbox(v1::SANDBOX_NONE);  // nothing ran (a rejection) unless a backend is set below
  if (result.plan) {
    out->set_attempt(result.plan->attempt);
    if (result.plan->request.dry_run && !result.rejection) fill_plan(*result.plan, out->mutable_plan());
  }
  if (result.rejection) {
    std::string text;
    fill_rejection(result.plan->request, *result.rejection, out->mutable_rejection(), &text);
    out->set_text(text);
    return;
  }
  if (result.unified) {
    fill_exec_result(*result.unified, out);
    out->set_sandbox(to_proto(result.plan->backend));
    out->set_likely_sandbox_denied(result.likely_sandbox_denied);
  } else if (result.plan) {
    out->set_sandbox(to_proto(result.plan->backend));
    out->set_text(orchestrator::describe_plan(*result.plan));
  }
}

void fill_run_response(const orchestrator::CommandResult& result, v1::RunCommandResponse* out) {
  out->set_sandbox(v1::SANDBOX_NONE);  // nothing ran (a rejection) unless a backend is set below
  if (result.plan) {
    out->set_attempt(result.plan->attempt);
    if (result.plan->request.dry_run && !result.rejection) {
      fill_plan(*result.plan, out->mutable_plan());
      out->set_sandbox(to_proto(result.plan->backend));
      out->set_text(orchestrator::describe_plan(*result.plan));
    }
  }
  if (result.rejection) {
    std::string text;
    fill_rejection(result.plan->request, *result.rejection, out->mutable_rejection(), &text);
    out->set_text(text);
    return;
  }
  if (!result.one_shot) return;
  const auto& o = *result.one_shot;
  out->set_exit_code(o.exit_code);
  if (o.signal) out->set_signal(*o.signal);
  out->set_stdout(o.stdout_bytes);
  out->set_stderr(o.stderr_bytes);
  out->set_aggregated_output(o.aggregated);
  out->set_timed_out(o.timed_out);
  out->set_wall_time_seconds(o.wall_time_seconds);
  out->set_sandbox(to_proto(result.plan->backend));
  out->set_likely_sandbox_denied(result.likely_sandbox_denied);
  out->set_text(result.one_shot_text);
  out->set_termination(to_proto(o.termination));
  fill_usage(o.usage, out->mutable_usage());
}

void fill_session_info(const exec::Session& session, v1::SessionInfo* out) {
  const auto& m = session.metadata();
  out->set_session_id(m.id);
  for (const auto& a : m.argv) out->add_argv(a);
  out->set_workdir(m.cwd);
  out->set_tty(m.tty);
  if (m.tty) {
    out->set_rows(session.terminal_size().first);
    out->set_cols(session.terminal_size().second);
  }
  out->set_owner_uid(m.owner_uid);
  out->set_agent_id(m.agent_id);
  out->set_pid(session.pid());
  out->set_started_at_unix_ms(unix_ms(m.started_at));
  out->set_last_used_unix_ms(unix_ms_from_steady(session.last_used()));
  out->set_running(!session.has_exited());
  if (session.exit_status()) out->set_exit_code(session.exit_status()->exit_code);
  out->set_output_bytes(session.stream_offset());
  out->set_call_id(m.call_id);
  out->set_waiting_calls(static_cast<uint32_t>(session.waiting_calls()));
  out->set_sandbox(to_proto(m.sandbox));
  out->set_network_mode(std::string(sandbox::to_string(m.network)));
  fill_usage(session.usage(), out->mutable_usage());
}

void fill_approval(const orchestrator::ApprovalTicket& t, v1::ApprovalRequest* out) {
  out->set_approval_id(t.id);
  out->set_requester_uid(t.requester_uid);
  out->set_agent_id(t.agent_id);
  for (const auto& a : t.argv) out->add_argv(a);
  out->set_cmd(t.cmd);
  out->set_workdir(t.workdir);
  out->mutable_reason()->set_kind(to_proto(t.reason.kind));
  out->mutable_reason()->set_message(t.reason.message);
  out->mutable_reason()->set_justification(t.reason.justification);
  for (const auto& m : t.matched_rules) fill_rule_match(m, out->add_matched_rules());
  fill_sandbox_summary(t.sandbox, out->mutable_sandbox());
  out->mutable_sandbox()->set_backend(backend_to_proto(t.sandbox.backend));
  out->set_created_at_unix_ms(unix_ms(t.created_at));
  if (t.expires_at) out->set_expires_at_unix_ms(unix_ms(*t.expires_at));
  out->set_turn_id(t.turn_id);
  out->set_call_id(t.call_id);
  out->set_tty(t.tty);
  for (const auto& a : t.proposed_amendment) out->add_proposed_amendment(a);
  out->set_attempt(t.attempt);
  if (t.network) {
    auto* n = out->mutable_network();
    n->set_host(t.network->host);
    n->set_port(t.network->port);
    n->set_protocol(t.network->protocol);
    n->set_session_id(t.network->session_id);
  }
  if (t.nested) {
    auto* n = out->mutable_nested();
    n->set_session_id(t.nested->session_id);
    n->set_parent_command(utf8_lossy(t.nested->parent_command));
    n->set_pid(t.nested->pid);
    n->set_path(utf8_lossy(t.nested->path));
  }
}

void fill_approval_event(const orchestrator::ApprovalEvent& event, v1::ApprovalEvent* out) {
  switch (event.kind) {
    case orchestrator::ApprovalEvent::Kind::kAdded: fill_approval(*event.ticket, out->mutable_added()); break;
    case orchestrator::ApprovalEvent::Kind::kSynced: out->mutable_synced(); break;
    case orchestrator::ApprovalEvent::Kind::kResolved: {
      auto* r = out->mutable_resolved();
      r->set_approval_id(event.approval_id);
      r->set_decision(to_proto(event.outcome.decision));
      if (event.outcome.resolved_by) r->set_resolved_by_uid(*event.outcome.resolved_by);
      r->set_resolution_source(orchestrator::outcome_source_name(event.outcome.kind));
      break;
    }
  }
}

}  // namespace codexd::server
