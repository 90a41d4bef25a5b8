#include "daemon/server/policy_service.h"

#include "daemon/orchestrator/identity.h"
#include "daemon/server/core_reactors.h"
#include "daemon/server/proto_convert.h"
#include "daemon/server/request_validation.h"
#include "policies/check_json.h"
#include "policies/command_safety.h"

namespace codexd::server {

grpc::ServerUnaryReactor* PolicyService::CheckPolicy(grpc::CallbackServerContext* ctx, const v1::CheckPolicyRequest* request,
                                                     v1::CheckPolicyResponse* response) {
  auto [reactor, caller] = begin_unary(core_, ctx);
  if (!caller) return reactor;
  auto argv = validate_policy_check(*request, *deps_.config);
  if (!argv.ok()) {
    reactor->finish(argv.status());
    return reactor;
  }
  // Pure evaluation on an immutable policy snapshot: safe on this gRPC thread.
  const config::Config& config = *deps_.config;
  const std::string workdir = request->workdir().empty() ? "/" : request->workdir();
  auto run_as = orchestrator::resolve_run_as(config.daemon.mode == config::DaemonMode::kSystem, caller->uid,
                                             config.daemon.root_runs_as);
  const std::string home = run_as.ok() ? run_as->home : "/";
  auto snapshot = deps_.policies->current();

  policy::MatchOptions match;
  match.resolve_host_executables = request->has_resolve_host_executables() ? request->resolve_host_executables() : false;
  match.cwd = workdir;
  match.home = home;
  response->set_codex_json(policy::evaluation_to_json(snapshot->check(*argv, match), false));

  policy::ExecRequest assess;
  assess.argv = *argv;
  assess.approval = config.approval_policy_for(caller->agent_id);
  assess.filesystem = config.sandbox.policy.mode == sandbox::SandboxMode::kDangerFullAccess
                          ? policy::FilesystemPolicyKind::kUnrestricted
                          : policy::FilesystemPolicyKind::kRestricted;
  assess.sandbox_override_requested = request->sandbox_permissions() == v1::REQUIRE_ESCALATED;
  assess.cwd = workdir;
  assess.home = home;
  auto requirement = policy::assess_exec(*snapshot, assess);
  for (const auto& m : requirement.matched_rules) fill_rule_match(m, response->add_matched_rules());
  policy::Decision strictest = policy::Decision::kAllow;
  for (const auto& seg : requirement.segments) {
    strictest = policy::strictest(strictest, seg.decision);
    auto* out = response->add_segments();
    for (const auto& a : seg.argv) out->add_argv(a);
    out->set_decision(to_proto(seg.decision));
    out->set_known_safe(policy::is_known_safe_command(seg.argv));
    out->set_dangerous(policy::command_might_be_dangerous(seg.argv));
  }
  response->set_decision(requirement.segments.empty() ? v1::DECISION_UNSPECIFIED : to_proto(strictest));
  fill_requirement(requirement, response->mutable_requirement());
  response->set_approval_policy(policy::approval_policy_name(assess.approval));
  reactor->finish(grpc::Status::OK);
  return reactor;
}

}  // namespace codexd::server
