#include "daemon/server/sandbox_service.h"

#include "base/shell_quote.h"
#include "daemon/exec/one_shot.h"
#include "daemon/orchestrator/one_shot_result.h"
#include "daemon/server/core_reactors.h"
#include "daemon/server/proto_convert.h"
#include "daemon/server/request_validation.h"
#include "platform/backends/manager_factory.h"
#include "platform/sandbox/format.h"

namespace codexd::server {
namespace {

void fill_one_shot(const exec::OneShotOutcome& r, sandbox::Backend backend, v1::RunCommandResponse* response) {
  response->set_exit_code(r.exit_code);
  if (r.signal) response->set_signal(*r.signal);
  response->set_stdout(r.stdout_bytes);
  response->set_stderr(r.stderr_bytes);
  response->set_aggregated_output(r.aggregated);
  response->set_timed_out(r.timed_out);
  response->set_wall_time_seconds(r.wall_time_seconds);
  response->set_likely_sandbox_denied(orchestrator::one_shot_likely_denied(backend, r));
  response->set_text(orchestrator::one_shot_text(r));
  response->set_termination(to_proto(r.termination));
  fill_usage(r.usage, response->mutable_usage());
}

void fill_launch_plan(const orchestrator::BuiltLaunch& built, const sandbox::SandboxSpec& spec, const std::string& workdir,
                      v1::ExecPlan* out) {
  out->set_workdir(workdir);
  fill_sandbox_summary(spec, built.plan.backend, out->mutable_sandbox());
  for (const auto& e : built.spec.env) out->add_env(e);
  for (const auto& a : built.spec.argv) out->add_launch_argv(a);
  for (const auto& r : built.plan.rules) out->add_sandbox_rules(r);
  if (built.spec.run_as) {
    out->set_run_as_uid(built.spec.run_as->uid);
    out->set_run_as_gid(built.spec.run_as->gid);
  }
}

}  // namespace

// Builds the launch with the same LaunchBuilder as ExecCommand (identity, sandbox spec,
// environment), with the sandbox policy and backend the request asks for, then runs it as a
// one-shot unless `plan_only`.
grpc::ServerUnaryReactor* SandboxService::RunSandboxed(grpc::CallbackServerContext* ctx, const v1::SandboxRunRequest* request,
                                                       v1::RunCommandResponse* response) {
  auto [reactor, caller] = begin_unary(core_, ctx);
  if (!caller) return reactor;
  if (!caller->is_admin) {
    reactor->finish(PermissionDenied("sandbox debugging runs need an admin uid (root, the daemon's uid, or daemon.admin_uids)"));
    return reactor;
  }
  auto input = validate_sandbox_run(*request);
  if (!input.ok()) {
    reactor->finish(input.status());
    return reactor;
  }
  const orchestrator::LaunchBuilder& launches = *deps_.launches;
  auto run_as = launches.resolve_identity(caller->uid, input->launch.workdir);
  if (!run_as.ok()) {
    reactor->finish(run_as.status());
    return reactor;
  }
  auto spec = launches.resolve_sandbox(input->policy, input->launch.workdir, *run_as, input->launch.agent_id);
  if (!spec.ok()) {
    reactor->finish(spec.status());
    return reactor;
  }
  // A forced backend needs its own probe; the default uses the daemon's manager.
  std::unique_ptr<sandbox::SandboxManager> forced;
  if (input->backend != sandbox::BackendPreference::kAuto) {
    sandbox::SandboxManagerOptions options;
    options.preference = input->backend;
    options.helper_path = deps_.config->sandbox.helper_path;
    forced = sandbox::create_sandbox_manager(options);
  }
  auto built = launches.build(*run_as, *spec, /*confined=*/true, input->launch, forced.get());
  if (!built.ok()) {
    response->set_sandbox(v1::SANDBOX_NONE);  // nothing ran
    response->mutable_rejection()->set_reason(v1::Rejection::SANDBOX_UNAVAILABLE);
    response->mutable_rejection()->set_message(built.status().message());
    response->set_text("sandbox unavailable: " + built.status().message());
    reactor->finish(grpc::Status::OK);
    return reactor;
  }
  const sandbox::Backend backend = built->plan.backend;
  response->set_sandbox(to_proto(backend));
  if (input->plan_only) {
    response->set_text(sandbox::format_launch_plan(built->plan));
    fill_launch_plan(*built, *spec, input->launch.workdir, response->mutable_plan());
    reactor->finish(grpc::Status::OK);
    return reactor;
  }
  exec::ChannelOwner owner{caller->uid, "codexctl-sandbox", 0, shell_join(input->launch.argv)};
  on_core(core_, [this, reactor, response, launch = std::move(built->spec), owner, timeout = input->timeout_ms, backend] {
    auto slot = reactor->slot();
    auto run = exec::OneShotRun::start(*core_.io, launch, owner, timeout, [slot, response, backend](Result<exec::OneShotOutcome> r) {
      if (!slot->reactor) return;
      if (!r.ok()) {
        slot->reactor->finish(r.status());
        return;
      }
      fill_one_shot(*r, backend, response);
      slot->reactor->finish(grpc::Status::OK);
    }, deps_.limits);
    if (!run.ok()) {
      reactor->finish(run.status());
      return;
    }
    reactor->set_on_cancel([handle = *run] { handle->cancel(); });
  });
  return reactor;
}

}  // namespace codexd::server
