#include "daemon/server/sandbox_service.h"

#include "daemon/exec/environment.h"
#include "daemon/exec/one_shot.h"
#include "daemon/exec/result_text.h"
#include "daemon/exec/truncation.h"
#include "base/utf8.h"
#include "daemon/orchestrator/identity.h"
#include "daemon/server/core_reactors.h"
#include "daemon/server/proto_convert.h"
#include "daemon/server/request_validation.h"
#include "platform/sandbox/format.h"

namespace codexd::server {
namespace {

Status check_paths(const char* field, const google::protobuf::RepeatedPtrField<std::string>& paths) {
  for (const auto& p : paths) {
    if (p.empty() || p[0] != '/' || p.find('\0') != std::string::npos || p.size() > kMaxPathBytes) {
      return InvalidArgument(std::string("`") + field + "` entries must be absolute paths (got \"" + p + "\")");
    }
  }
  return Status::Ok();
}

}  // namespace

grpc::ServerUnaryReactor* SandboxService::RunSandboxed(grpc::CallbackServerContext* ctx, const v1::SandboxRunRequest* request,
                                                       v1::RunCommandResponse* response) {
  auto [reactor, caller] = begin_unary(core_, ctx);
  if (!caller) return reactor;
  if (!caller->is_admin) {
    reactor->finish(PermissionDenied("sandbox debugging runs need an admin uid (root, the daemon's uid, or daemon.admin_uids)"));
    return reactor;
  }
  Status st = Status::Ok();
  if (request->argv_size() == 0 || request->argv(0).empty()) st = InvalidArgument("`argv` is required");
  if (st.ok() && (request->workdir().empty() || request->workdir()[0] != '/')) {
    st = InvalidArgument("`workdir` must be an absolute path (got \"" + request->workdir() + "\")");
  }
  sandbox::SandboxPolicy policy;
  if (st.ok()) {
    auto mode = sandbox::parse_sandbox_mode(request->mode().empty() ? "workspace-write" : request->mode());
    if (!mode) st = InvalidArgument("`mode` must be read-only or workspace-write (got \"" + request->mode() + "\")");
    else if (*mode == sandbox::SandboxMode::kDangerFullAccess) st = InvalidArgument("`mode` danger-full-access runs no sandbox; refused");
    else policy.mode = *mode;
  }
  if (st.ok()) st = check_paths("writable_roots", request->writable_roots());
  if (st.ok()) st = check_paths("denied_read", request->denied_read());
  std::optional<sandbox::BackendPreference> backend = sandbox::BackendPreference::kAuto;
  if (st.ok() && !request->backend().empty()) {
    backend = sandbox::parse_backend_preference(request->backend());
    if (!backend) st = InvalidArgument("`backend` must be auto, bwrap or landlock (got \"" + request->backend() + "\")");
  }
  uint32_t timeout = request->has_timeout_ms() ? request->timeout_ms() : 10'000;
  if (st.ok() && (timeout == 0 || timeout > kMaxOneShotTimeoutMs)) st = InvalidArgument("`timeout_ms` must be between 1 and 86400000");
  for (const auto& arg : request->argv()) {
    if (st.ok() && arg.find('\0') != std::string::npos) st = InvalidArgument("`argv` contains a NUL byte");
  }
  if (!st.ok()) {
    reactor->finish(st);
    return reactor;
  }
  policy.writable_roots.assign(request->writable_roots().begin(), request->writable_roots().end());
  policy.network_access = request->network_access();
  policy.denied_read.assign(request->denied_read().begin(), request->denied_read().end());
  policy.exclude_slash_tmp = request->exclude_slash_tmp();
  policy.exclude_tmpdir_env_var = request->exclude_tmpdir_env_var();

  const config::Config& config = *deps_.config;
  const bool system_mode = config.daemon.mode == config::DaemonMode::kSystem;
  auto run_as = orchestrator::resolve_run_as(system_mode, caller->uid, config.daemon.root_runs_as);
  if (!run_as.ok()) {
    reactor->finish(run_as.status());
    return reactor;
  }
  // A forced backend needs its own probe; the default uses the daemon's manager.
  std::shared_ptr<const sandbox::SandboxManager> manager;
  if (*backend != sandbox::BackendPreference::kAuto) {
    sandbox::SandboxManagerOptions options;
    options.preference = *backend;
    options.helper_path = config.sandbox.helper_path;
    manager = sandbox::create_sandbox_manager(options);
  } else {
    manager = std::shared_ptr<const sandbox::SandboxManager>(deps_.sandbox, [](const sandbox::SandboxManager*) {});
  }
  sandbox::ResolveContext context;
  context.cwd = request->workdir();
  std::string socket_dir = deps_.socket_path.substr(0, deps_.socket_path.rfind('/'));
  context.masked_paths.push_back(socket_dir);
  auto spec = sandbox::resolve_sandbox_spec(policy, context);
  if (!spec.ok()) {
    reactor->finish(spec.status());
    return reactor;
  }
  exec::EnvironmentInputs inputs;
  inputs.base = system_mode ? exec::EnvMap{{"PATH", "/usr/local/bin:/usr/bin:/bin"}} : exec::current_process_environment();
  for (const auto& [k, v] : request->env()) inputs.request[k] = v;
  inputs.unified_exec = false;
  inputs.forced = run_as->forced_env;
  auto plan = manager->plan(*spec, sandbox::LaunchRequest{{request->argv().begin(), request->argv().end()}, request->workdir(),
                                                          exec::build_child_environment(config.environment, inputs)});
  if (!plan.ok()) {
    response->mutable_rejection()->set_reason(v1::Rejection::SANDBOX_UNAVAILABLE);
    response->mutable_rejection()->set_message(plan.status().message());
    response->set_text("sandbox unavailable: " + plan.status().message());
    reactor->finish(grpc::Status::OK);
    return reactor;
  }
  response->set_sandbox(to_proto(plan->backend));
  if (request->plan_only()) {
    response->set_text(sandbox::format_launch_plan(*plan));
    reactor->finish(grpc::Status::OK);
    return reactor;
  }
  exec::LaunchSpec launch;
  launch.executable = plan->argv.front();
  launch.argv = plan->argv;
  launch.env = plan->env;
  launch.cwd = plan->cwd.empty() ? request->workdir() : plan->cwd;
  launch.run_as = run_as->credentials;
  launch.sandbox = std::string(sandbox::to_string(plan->backend));
  on_core(core_, [this, reactor, response, launch, timeout, backend_kind = plan->backend] {
    auto slot = reactor->slot();
    auto run = exec::OneShotRun::start(*core_.io, launch, timeout, [slot, response, backend_kind](Result<exec::OneShotOutcome> r) {
      if (!slot->reactor) return;
      if (!r.ok()) {
        slot->reactor->finish(r.status());
        return;
      }
      response->set_exit_code(r->exit_code);
      if (r->signal) response->set_signal(*r->signal);
      response->set_stdout(r->stdout_bytes);
      response->set_stderr(r->stderr_bytes);
      response->set_aggregated_output(r->aggregated);
      response->set_timed_out(r->timed_out);
      response->set_wall_time_seconds(r->wall_time_seconds);
      response->set_likely_sandbox_denied(sandbox::is_likely_sandbox_denied(backend_kind, r->exit_code, r->aggregated));
      response->set_text(exec::render_classic_exec_text(r->exit_code, r->wall_time_seconds,
                                                        utf8_lossy(exec::one_shot_content(*r)),
                                                        exec::kDefaultMaxOutputTokens));
      slot->reactor->finish(grpc::Status::OK);
    });
    if (!run.ok()) {
      reactor->finish(run.status());
      return;
    }
    reactor->set_on_cancel([handle = *run] { handle->cancel(); });
  });
  return reactor;
}

}  // namespace codexd::server
