#include "daemon/server/request_validation.h"

#include <string>

namespace codexd::server {
namespace {

bool has_nul(const std::string& s) { return s.find('\0') != std::string::npos; }

Status too_big(const std::string& field, size_t got, size_t limit) {
  return InvalidArgument("`" + field + "` is " + std::to_string(got) + " bytes; the limit is " + std::to_string(limit));
}

Status check_text(const std::string& field, const std::string& value, size_t limit) {
  if (value.size() > limit) return too_big(field, value.size(), limit);
  if (has_nul(value)) return InvalidArgument("`" + field + "` contains a NUL byte");
  return Status::Ok();
}

Status check_absolute_path(const std::string& field, const std::string& value, bool required) {
  if (value.empty()) {
    if (required) return InvalidArgument("`" + field + "` is required: give the absolute directory to run in");
    return Status::Ok();
  }
  CODEXD_RETURN_IF_ERROR(check_text(field, value, kMaxPathBytes));
  if (value[0] != '/') return InvalidArgument("`" + field + "` must be an absolute path (got \"" + value + "\")");
  return Status::Ok();
}

Result<std::vector<std::string>> validate_argv(const google::protobuf::RepeatedPtrField<std::string>& argv) {
  if (argv.empty()) return InvalidArgument("`argv` is required: give the program to run and its arguments");
  if (argv.size() > static_cast<int>(kMaxArgs)) {
    return InvalidArgument("`argv` has " + std::to_string(argv.size()) + " entries; the limit is " +
                           std::to_string(kMaxArgs));
  }
  size_t total = 0;
  for (int i = 0; i < argv.size(); ++i) {
    total += argv[i].size();
    if (has_nul(argv[i])) return InvalidArgument("`argv[" + std::to_string(i) + "]` contains a NUL byte");
  }
  if (total > kMaxCommandBytes) return too_big("argv", total, kMaxCommandBytes);
  if (argv[0].empty()) return InvalidArgument("`argv[0]` is empty: give the program to run");
  return std::vector<std::string>(argv.begin(), argv.end());
}

Result<std::map<std::string, std::string>> validate_env(const google::protobuf::Map<std::string, std::string>& env) {
  if (env.size() > kMaxEnvEntries) {
    return InvalidArgument("`env` has " + std::to_string(env.size()) + " entries; the limit is " +
                           std::to_string(kMaxEnvEntries));
  }
  std::map<std::string, std::string> out;
  size_t env_bytes = 0;
  for (const auto& [name, value] : env) {
    env_bytes += name.size() + value.size();
    if (name.empty() || name.find('=') != std::string::npos || has_nul(name)) {
      return InvalidArgument("`env` name \"" + name + "\" is invalid: names must be non-empty without '=' or NUL");
    }
    if (has_nul(value)) return InvalidArgument("`env[" + name + "]` contains a NUL byte");
    out[name] = value;
  }
  if (env_bytes > kMaxEnvBytes) return too_big("env", env_bytes, kMaxEnvBytes);
  return out;
}

Result<std::vector<std::string>> validate_absolute_paths(const std::string& field,
                                                         const google::protobuf::RepeatedPtrField<std::string>& paths) {
  if (paths.size() > static_cast<int>(kMaxArgs)) return InvalidArgument("`" + field + "` has too many entries");
  for (const auto& p : paths) {
    if (p.empty()) return InvalidArgument("`" + field + "` entries must be absolute paths (got \"\")");
    CODEXD_RETURN_IF_ERROR(check_absolute_path(field, p, true));
  }
  return std::vector<std::string>(paths.begin(), paths.end());
}

uint32_t one_shot_timeout_or_default(bool has, uint32_t value) { return has ? value : 10'000; }

Status check_one_shot_timeout(uint32_t timeout) {
  if (timeout == 0 || timeout > kMaxOneShotTimeoutMs) {
    return InvalidArgument("`timeout_ms` must be between 1 and " + std::to_string(kMaxOneShotTimeoutMs) + " (got " +
                           std::to_string(timeout) + ")");
  }
  return Status::Ok();
}

// `asked` within (1..`allowed`]; `allowed` absent: any positive value.
Status check_within(const char* field, uint64_t asked, const std::optional<uint64_t>& allowed, const std::string& unit) {
  if (asked == 0) return InvalidArgument(std::string("`limits.") + field + "` must be positive (omit it for the default)");
  if (allowed && asked > *allowed) {
    return InvalidArgument(std::string("`limits.") + field + "` asks for " + std::to_string(asked) + unit +
                           "; this agent may ask for at most " + std::to_string(*allowed) + unit);
  }
  return Status::Ok();
}

// The parts ExecCommand and RunCommand share.
template <typename Req>
Result<orchestrator::ExecRequest> validate_common(const Req& request, const config::Config& config,
                                                  const std::string& agent_id) {
  orchestrator::ExecRequest out;
  if (request.has_limits()) {
    CODEXD_ASSIGN_OR_RETURN(out.limits, validate_requested_limits(request.limits(), config.agent_budget_for(agent_id)));
  }
  const bool has_cmd = !request.cmd().empty();
  const bool has_argv = request.argv_size() > 0;
  if (has_cmd && has_argv) return InvalidArgument("set exactly one of `cmd` and `argv` (both are set)");
  if (!has_cmd && !has_argv) return InvalidArgument("missing command: set `cmd` (a shell script) or `argv`");
  CODEXD_RETURN_IF_ERROR(check_absolute_path("workdir", request.workdir(), true));
  out.workdir = request.workdir();
  while (out.workdir.size() > 1 && out.workdir.back() == '/') out.workdir.pop_back();

  if (has_cmd) {
    CODEXD_RETURN_IF_ERROR(check_text("cmd", request.cmd(), kMaxCommandBytes));
    CODEXD_RETURN_IF_ERROR(check_absolute_path("shell", request.shell(), false));
    std::string shell = request.shell().empty() ? config.exec.default_shell : request.shell();
    bool login = request.has_login() ? request.login() : config.exec.allow_login_shell;
    if (request.has_login() && request.login() && !config.exec.allow_login_shell) {
      return InvalidArgument("login shell is disabled by config; omit `login` or set it to false.");
    }
    out.argv = {shell, login ? "-lc" : "-c", request.cmd()};
    out.from_cmd = true;
  } else {
    if (!request.shell().empty()) return InvalidArgument("`shell` applies only to `cmd`; remove it or use `cmd`");
    if (request.has_login()) return InvalidArgument("`login` applies only to `cmd`; remove it or use `cmd`");
    auto argv = validate_argv(request.argv());
    if (!argv.ok()) return argv.status();
    out.argv = std::move(argv).value();
  }
  auto env = validate_env(request.env());
  if (!env.ok()) return env.status();
  out.env = std::move(env).value();

  CODEXD_RETURN_IF_ERROR(check_text("justification", request.justification(), kMaxJustificationBytes));
  CODEXD_RETURN_IF_ERROR(check_text("turn_id", request.turn_id(), kMaxLabelBytes));
  CODEXD_RETURN_IF_ERROR(check_text("call_id", request.call_id(), kMaxLabelBytes));
  if (request.prefix_rule_size() > 64) return InvalidArgument("`prefix_rule` has more than 64 tokens");
  for (const auto& token : request.prefix_rule()) {
    CODEXD_RETURN_IF_ERROR(check_text("prefix_rule", token, kMaxPathBytes));
    out.prefix_rule.push_back(token);
  }
  CODEXD_ASSIGN_OR_RETURN(out.require_escalated, validate_sandbox_permissions(request.sandbox_permissions()));
  out.justification = request.justification();
  out.turn_id = request.turn_id();
  out.call_id = request.call_id();
  out.dry_run = request.dry_run();
  return out;
}

// network_access is the older switch; network_mode says which network when it is on.
Result<sandbox::NetworkMode> validate_network_mode(const std::string& mode, bool network_access) {
  if (mode.empty()) return network_access ? sandbox::NetworkMode::kProxy : sandbox::NetworkMode::kOff;
  std::optional<sandbox::NetworkMode> parsed = sandbox::parse_network_mode(mode);
  if (!parsed) return InvalidArgument("`network_mode` must be off, proxy or host (got \"" + mode + "\")");
  if (*parsed == sandbox::NetworkMode::kOff && network_access) {
    return InvalidArgument("`network_access` is true but `network_mode` is \"off\"; set one of them");
  }
  return *parsed;
}

Status validate_max_output_tokens(bool has, uint32_t value) {
  if (has && value > kMaxOutputTokens) {
    return InvalidArgument("`max_output_tokens` must be at most " + std::to_string(kMaxOutputTokens) + " (got " +
                           std::to_string(value) + ")");
  }
  return Status::Ok();
}

Status validate_stdin(const std::string& chars, const char* field) {
  if (chars.size() > kMaxStdinBytes) return too_big(field, chars.size(), kMaxStdinBytes);
  return Status::Ok();
}

}  // namespace

Result<limits::ResourceLimits> validate_requested_limits(const v1::ResourceLimitsRequest& request,
                                                         const limits::ResourceLimits& agent_budget) {
  limits::ResourceLimits out;
  if (request.has_pids_max()) {
    CODEXD_RETURN_IF_ERROR(check_within("pids_max", request.pids_max(), agent_budget.pids_max, " processes"));
    out.pids_max = request.pids_max();
  }
  if (request.has_memory_max_bytes()) {
    CODEXD_RETURN_IF_ERROR(check_within("memory_max_bytes", request.memory_max_bytes(), agent_budget.memory_max, " bytes"));
    out.memory_max = request.memory_max_bytes();
  }
  if (request.has_cpu_max_percent()) {
    std::optional<uint64_t> allowed;
    if (agent_budget.cpu_max_percent) allowed = *agent_budget.cpu_max_percent;
    CODEXD_RETURN_IF_ERROR(check_within("cpu_max_percent", request.cpu_max_percent(), allowed, "%"));
    out.cpu_max_percent = request.cpu_max_percent();
  }
  if (request.has_cpu_weight()) {
    // A weight only shares CPU among the agent's own commands: any value in range is allowed.
    CODEXD_RETURN_IF_ERROR(check_within("cpu_weight", request.cpu_weight(), uint64_t{10000}, ""));
    out.cpu_weight = request.cpu_weight();
  }
  return out;
}

Result<orchestrator::ExecRequest> validate_exec_command(const v1::ExecCommandRequest& request, const config::Config& config,
                                                        const std::string& agent_id) {
  CODEXD_ASSIGN_OR_RETURN(auto out, validate_common(request, config, agent_id));
  out.tool = orchestrator::Tool::kUnifiedExec;
  out.tty = request.tty();
  if (request.rows() > kMaxTerminalSize || request.cols() > kMaxTerminalSize) {
    return InvalidArgument("`rows` and `cols` must be at most " + std::to_string(kMaxTerminalSize));
  }
  if (!request.tty() && (request.rows() != 0 || request.cols() != 0)) {
    return InvalidArgument("`rows`/`cols` apply only with `tty` = true");
  }
  out.rows = static_cast<unsigned short>(request.rows() ? request.rows() : 24);
  out.cols = static_cast<unsigned short>(request.cols() ? request.cols() : 80);
  CODEXD_RETURN_IF_ERROR(validate_max_output_tokens(request.has_max_output_tokens(), request.max_output_tokens()));
  return out;
}

Result<orchestrator::ExecRequest> validate_run_command(const v1::RunCommandRequest& request, const config::Config& config,
                                                       const std::string& agent_id) {
  CODEXD_ASSIGN_OR_RETURN(auto out, validate_common(request, config, agent_id));
  out.tool = orchestrator::Tool::kShellCommand;
  out.timeout_ms = one_shot_timeout_or_default(request.has_timeout_ms(), request.timeout_ms());
  CODEXD_RETURN_IF_ERROR(check_one_shot_timeout(out.timeout_ms));
  return out;
}

Result<SandboxRunInput> validate_sandbox_run(const v1::SandboxRunRequest& request) {
  SandboxRunInput out;
  CODEXD_ASSIGN_OR_RETURN(out.launch.argv, validate_argv(request.argv()));
  CODEXD_RETURN_IF_ERROR(check_absolute_path("workdir", request.workdir(), true));
  out.launch.workdir = request.workdir();
  while (out.launch.workdir.size() > 1 && out.launch.workdir.back() == '/') out.launch.workdir.pop_back();
  CODEXD_ASSIGN_OR_RETURN(out.launch.env, validate_env(request.env()));
  out.launch.unified_exec = false;  // like RunCommand: a one-shot, no unified-exec overlay

  auto mode = sandbox::parse_sandbox_mode(request.mode().empty() ? "workspace-write" : request.mode());
  if (!mode || *mode == sandbox::SandboxMode::kDangerFullAccess) {
    return InvalidArgument("`mode` must be read-only or workspace-write (got \"" + request.mode() +
                           "\"); danger-full-access runs no sandbox");
  }
  out.policy.mode = *mode;
  CODEXD_ASSIGN_OR_RETURN(out.policy.writable_roots, validate_absolute_paths("writable_roots", request.writable_roots()));
  CODEXD_ASSIGN_OR_RETURN(out.policy.denied_read, validate_absolute_paths("denied_read", request.denied_read()));
  CODEXD_ASSIGN_OR_RETURN(out.policy.network, validate_network_mode(request.network_mode(), request.network_access()));
  out.policy.exclude_slash_tmp = request.exclude_slash_tmp();
  out.policy.exclude_tmpdir_env_var = request.exclude_tmpdir_env_var();

  if (!request.backend().empty()) {
    auto backend = sandbox::parse_backend_preference(request.backend());
    if (!backend) return InvalidArgument("`backend` must be auto, bwrap or landlock (got \"" + request.backend() + "\")");
    out.backend = *backend;
  }
  out.timeout_ms = one_shot_timeout_or_default(request.has_timeout_ms(), request.timeout_ms());
  CODEXD_RETURN_IF_ERROR(check_one_shot_timeout(out.timeout_ms));
  out.plan_only = request.plan_only();
  return out;
}

Status validate_session_id(int32_t session_id) {
  if (session_id <= 0) return InvalidArgument("`session_id` is required (a positive id returned by ExecCommand)");
  return Status::Ok();
}

Status validate_write_stdin(const v1::WriteStdinRequest& request) {
  CODEXD_RETURN_IF_ERROR(validate_session_id(request.session_id()));
  CODEXD_RETURN_IF_ERROR(validate_stdin(request.chars(), "chars"));
  return validate_max_output_tokens(request.has_max_output_tokens(), request.max_output_tokens());
}

Status validate_poll(const v1::PollRequest& request) {
  CODEXD_RETURN_IF_ERROR(validate_session_id(request.session_id()));
  CODEXD_RETURN_IF_ERROR(validate_max_output_tokens(request.has_max_output_tokens(), request.max_output_tokens()));
  if (request.has_from_offset() && request.has_max_output_tokens() && request.max_output_tokens() == 0) {
    return InvalidArgument("`from_offset` needs `max_output_tokens` > 0 (a re-read of 0 bytes never moves forward)");
  }
  return Status::Ok();
}

Result<CancelInput> validate_cancel(const v1::CancelRequest& request) {
  CODEXD_RETURN_IF_ERROR(validate_session_id(request.session_id()));
  CancelInput out;
  CODEXD_ASSIGN_OR_RETURN(out.mode, validate_cancel_mode(request.mode()));
  if (request.has_grace_ms()) {
    if (request.grace_ms() > 60000) return InvalidArgument("`grace_ms` must be at most 60000");
    out.grace = std::chrono::milliseconds(request.grace_ms());
  }
  return out;
}

Status validate_send_input(const v1::SendInputRequest& request) {
  CODEXD_RETURN_IF_ERROR(validate_session_id(request.session_id()));
  return validate_stdin(request.data(), "data");
}

Status validate_resize_terminal(const v1::ResizeTerminalRequest& request) {
  CODEXD_RETURN_IF_ERROR(validate_session_id(request.session_id()));
  if (request.rows() == 0 || request.cols() == 0 || request.rows() > kMaxTerminalSize || request.cols() > kMaxTerminalSize) {
    return InvalidArgument("`rows` and `cols` must be between 1 and " + std::to_string(kMaxTerminalSize));
  }
  return Status::Ok();
}

Result<orchestrator::ReviewDecision> validate_resolve_approval(const v1::ResolveApprovalRequest& request) {
  if (request.approval_id().empty()) return InvalidArgument("`approval_id` is required (from WatchApprovals or ListApprovals)");
  if (request.approval_id().size() > 64) {
    return InvalidArgument("`approval_id` is " + std::to_string(request.approval_id().size()) +
                           " bytes; an approval id is at most 64 (from WatchApprovals or ListApprovals)");
  }
  if (request.rationale().size() > 4096) return InvalidArgument("`rationale` is longer than 4096 bytes");
  using orchestrator::ReviewDecision;
  switch (request.decision()) {
    case v1::APPROVED: return ReviewDecision::kApproved;
    case v1::APPROVED_FOR_SESSION: return ReviewDecision::kApprovedForSession;
    case v1::APPROVED_EXECPOLICY_AMENDMENT: return ReviewDecision::kApprovedWithAmendment;
    case v1::DENIED: return ReviewDecision::kDenied;
    case v1::ABORT: return ReviewDecision::kAbort;
    default: {
      const std::string got = request.decision() == v1::REVIEW_DECISION_UNSPECIFIED ? "unset, REVIEW_DECISION_UNSPECIFIED"
                                                                                    : std::to_string(request.decision());
      return InvalidArgument(
          "`decision` must be APPROVED, APPROVED_FOR_SESSION, APPROVED_EXECPOLICY_AMENDMENT, DENIED or ABORT (got " + got + ")");
    }
  }
}

Result<std::vector<std::string>> validate_policy_check(const v1::CheckPolicyRequest& request, const config::Config& config) {
  const bool has_cmd = !request.cmd().empty();
  const bool has_argv = request.argv_size() > 0;
  if (has_cmd && has_argv) return InvalidArgument("set exactly one of `cmd` and `argv` (both are set)");
  if (!has_cmd && !has_argv) return InvalidArgument("missing command: set `cmd` or `argv`");
  CODEXD_RETURN_IF_ERROR(check_absolute_path("workdir", request.workdir(), false));
  CODEXD_RETURN_IF_ERROR(check_absolute_path("shell", request.shell(), false));
  CODEXD_RETURN_IF_ERROR(validate_sandbox_permissions(request.sandbox_permissions()).status());
  if (has_cmd) {
    CODEXD_RETURN_IF_ERROR(check_text("cmd", request.cmd(), kMaxCommandBytes));
    std::string shell = request.shell().empty() ? config.exec.default_shell : request.shell();
    return std::vector<std::string>{shell, config.exec.allow_login_shell ? "-lc" : "-c", request.cmd()};
  }
  size_t total = 0;
  for (const auto& arg : request.argv()) {
    total += arg.size();
    if (has_nul(arg)) return InvalidArgument("`argv` contains a NUL byte");
  }
  if (total > kMaxCommandBytes) return too_big("argv", total, kMaxCommandBytes);
  return std::vector<std::string>(request.argv().begin(), request.argv().end());
}

Result<bool> validate_sandbox_permissions(v1::SandboxPermissions permissions) {
  switch (permissions) {
    case v1::SANDBOX_PERMISSIONS_UNSPECIFIED:
    case v1::USE_DEFAULT: return false;
    case v1::REQUIRE_ESCALATED: return true;
    default:
      return InvalidArgument("`sandbox_permissions` is " + std::to_string(permissions) +
                             ", not a SandboxPermissions value: use USE_DEFAULT (1; unset means the same) or "
                             "REQUIRE_ESCALATED (2)");
  }
}

Result<exec::ExecEngine::CancelMode> validate_cancel_mode(v1::CancelRequest::Mode mode) {
  using CancelMode = exec::ExecEngine::CancelMode;
  switch (mode) {
    case v1::CancelRequest::MODE_UNSPECIFIED:
    case v1::CancelRequest::TERMINATE: return CancelMode::kTerminate;
    case v1::CancelRequest::INTERRUPT: return CancelMode::kInterrupt;
    case v1::CancelRequest::KILL: return CancelMode::kKill;
    default:
      return InvalidArgument("`mode` is " + std::to_string(mode) +
                             ", not a CancelRequest.Mode value: use TERMINATE (1; unset means the same), INTERRUPT (2) "
                             "or KILL (3)");
  }
}

}  // namespace codexd::server
