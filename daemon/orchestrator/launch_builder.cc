#include "daemon/orchestrator/launch_builder.h"

namespace codexd::orchestrator {

LaunchBuilder::LaunchBuilder(LaunchBuilderDeps deps) : deps_(std::move(deps)) {}

Result<RunAs> LaunchBuilder::resolve_identity(uid_t caller_uid, const std::string& workdir) const {
  auto run_as = resolve_run_as(system_mode(), caller_uid, deps_.config->daemon.root_runs_as);
  if (!run_as.ok()) return run_as.status();
  // User mode runs as the daemon itself, which may enter anything it can; only the directory
  // must exist. System mode checks with the dropped identity.
  Status access = system_mode() ? check_directory_access(workdir, run_as->uid, run_as->gid, run_as->groups)
                                : check_directory_access(workdir, 0, 0, {});
  if (!access.ok()) {
    StatusCode code = access.code() == StatusCode::kPermissionDenied ? StatusCode::kPermissionDenied
                                                                     : StatusCode::kInvalidArgument;
    return Status(code, access.message());
  }
  return run_as;
}

std::string LaunchBuilder::private_tmp_base() const {
  const std::string& configured = deps_.config->sandbox.private_tmp_dir;
  return configured.empty() ? default_private_tmp_base(system_mode()) : configured;
}

Result<sandbox::SandboxSpec> LaunchBuilder::resolve_sandbox(const sandbox::SandboxPolicy& policy,
                                                            const std::string& workdir, const RunAs& run_as,
                                                            const std::string& agent_id) const {
  sandbox::ResolveContext context;
  if (deps_.config->sandbox.private_tmp && policy.mode == sandbox::SandboxMode::kWorkspaceWrite &&
      !policy.exclude_slash_tmp) {
    if (deps_.private_tmp) {
      Result<std::string> dir = deps_.private_tmp->prepare(run_as.uid, run_as.gid, agent_id);
      if (!dir.ok()) return Status(dir.status().code(), "private /tmp: " + dir.status().message());
      context.private_tmp = *dir;
    } else {
      context.private_tmp = PrivateTmpStore::path_in(private_tmp_base(), run_as.uid, agent_id);
    }
  }
  context.cwd = workdir;
  // $TMPDIR becomes a writable root, so it comes from the daemon's own environment, never from
  // the request (a caller could otherwise name any directory); a system daemon's $TMPDIR is
  // not the caller's, so there it is not used.
  if (auto tmp = deps_.base_env.find("TMPDIR"); tmp != deps_.base_env.end() && !system_mode()) {
    context.tmpdir_env = tmp->second;
  }
  if (!deps_.socket_dir.empty()) context.masked_paths.push_back(deps_.socket_dir);
  CODEXD_ASSIGN_OR_RETURN(sandbox::SandboxSpec spec, sandbox::resolve_sandbox_spec(policy, context));
  const config::ExecSupervision supervision = deps_.config->exec_supervision_for(agent_id);
  spec.supervise_exec = supervision != config::ExecSupervision::kOff && spec.mode != sandbox::SandboxMode::kDangerFullAccess;
  spec.exec_audit_only = spec.supervise_exec && supervision == config::ExecSupervision::kAudit;
  return spec;
}

std::vector<std::string> LaunchBuilder::environment(const RunAs& run_as, const LaunchInput& input) const {
  exec::EnvironmentInputs inputs;
  if (system_mode()) {
    inputs.base = {{"PATH", std::string(kSystemModePath)}, {"SHELL", run_as.shell}, {"LANG", std::string(kSystemModeLang)}};
  } else {
    inputs.base = deps_.base_env;
  }
  inputs.request = input.env;
  inputs.unified_exec = input.unified_exec;
  inputs.forced = run_as.forced_env;
  return exec::build_child_environment(deps_.config->environment, inputs);
}

// The command's limits: the request's where it asked, limits.* otherwise; the agent's budget
// from limits.agent_* and its [agents."<id>"] table.
void LaunchBuilder::apply_limits(const LaunchInput& input, exec::LaunchSpec& spec) const {
  const config::Config& c = *deps_.config;
  spec.agent_id = input.agent_id;
  spec.agent_budget = c.agent_budget_for(input.agent_id);
  spec.session_limits = c.limits.session;
  const limits::ResourceLimits& asked = input.limits;
  if (asked.pids_max) spec.session_limits.pids_max = asked.pids_max;
  if (asked.memory_max) spec.session_limits.memory_max = asked.memory_max;
  if (asked.cpu_weight) spec.session_limits.cpu_weight = asked.cpu_weight;
  if (asked.cpu_max_percent) spec.session_limits.cpu_max_percent = asked.cpu_max_percent;
}

Result<BuiltLaunch> LaunchBuilder::build(const RunAs& run_as, const sandbox::SandboxSpec& spec, bool confined,
                                         const LaunchInput& input, const sandbox::SandboxManager* manager) const {
  const sandbox::SandboxManager& chosen = manager ? *manager : *deps_.sandbox;
  sandbox::LaunchRequest request{input.argv, input.workdir, environment(run_as, input), input.tty};
  const bool full_access = spec.mode == sandbox::SandboxMode::kDangerFullAccess;
  const bool unconfined = !confined || full_access;
  Result<sandbox::LaunchPlan> plan = unconfined ? chosen.plan_unconfined(request) : chosen.plan(spec, request);
  if (!plan.ok()) {
    // Which step failed decides the code: the program lookup, or the sandbox (whatever its
    // reason). Never fall back to running unsandboxed.
    return Status(unconfined ? StatusCode::kFailedPrecondition : StatusCode::kUnavailable, plan.status().message());
  }
  if (plan->backend == sandbox::Backend::kNone) {
    plan->rules = {full_access ? "no sandbox: danger-full-access" : "no sandbox: bypassed for this command"};
  }
  BuiltLaunch built;
  built.spec.executable = plan->executable;
  built.spec.argv = plan->argv;
  built.spec.env = plan->env;
  built.spec.cwd = plan->cwd.empty() ? input.workdir : plan->cwd;
  built.spec.tty = input.tty;
  built.spec.rows = input.rows;
  built.spec.cols = input.cols;
  built.spec.run_as = run_as.credentials;
  built.spec.sandbox = plan->backend;
  built.spec.forwards_signals = plan->forwards_signals;
  built.spec.console = plan->console_fd >= 0;
  built.spec.seccomp_program = plan->seccomp_program;
  built.spec.network = plan->backend == sandbox::Backend::kNone ? sandbox::NetworkMode::kHost : spec.network;
  built.spec.channel = {plan->channel_fd >= 0 && spec.network == sandbox::NetworkMode::kProxy, plan->supervises_exec};
  if (plan->backend != sandbox::Backend::kNone && spec.private_tmp && deps_.private_tmp) {
    built.spec.private_tmp_lease = deps_.private_tmp->lease(*spec.private_tmp);
  }
  if (built.spec.channel.any()) built.spec.channels = deps_.channels;
  apply_limits(input, built.spec);
  built.plan = std::move(plan).value();
  return built;
}

Rejection launch_rejection(const Status& failure) {
  if (failure.code() == StatusCode::kFailedPrecondition) return {Rejection::Reason::kSpawnFailed, failure.message(), {}};
  return {Rejection::Reason::kSandboxUnavailable, failure.message(), {}};
}

}  // namespace codexd::orchestrator
