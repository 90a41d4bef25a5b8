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

// The parts ExecCommand and RunCommand share.
template <typename Req>
Result<orchestrator::ExecRequest> validate_common(const Req& request, const config::Config& config) {
  orchestrator::ExecRequest out;
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
    out.script = request.cmd();
  } else {
    if (request.argv_size() > static_cast<int>(kMaxArgs)) {
      return InvalidArgument("`argv` has " + std::to_string(request.argv_size()) + " entries; the limit is " +
                             std::to_string(kMaxArgs));
    }
    if (!request.shell().empty()) return InvalidArgument("`shell` applies only to `cmd`; remove it or use `cmd`");
    if (request.has_login()) return InvalidArgument("`login` applies only to `cmd`; remove it or use `cmd`");
    size_t total = 0;
    for (int i = 0; i < request.argv_size(); ++i) {
      const std::string& arg = request.argv(i);
      total += arg.size();
      if (has_nul(arg)) return InvalidArgument("`argv[" + std::to_string(i) + "]` contains a NUL byte");
    }
    if (total > kMaxCommandBytes) return too_big("argv", total, kMaxCommandBytes);
    if (request.argv(0).empty()) return InvalidArgument("`argv[0]` is empty: give the program to run");
    out.argv.assign(request.argv().begin(), request.argv().end());
  }

  if (request.env_size() > static_cast<int>(kMaxEnvEntries)) {
    return InvalidArgument("`env` has " + std::to_string(request.env_size()) + " entries; the limit is " +
                           std::to_string(kMaxEnvEntries));
  }
  size_t env_bytes = 0;
  for (const auto& [name, value] : request.env()) {
    env_bytes += name.size() + value.size();
    if (name.empty() || name.find('=') != std::string::npos || has_nul(name)) {
      return InvalidArgument("`env` name \"" + name + "\" is invalid: names must be non-empty without '=' or NUL");
    }
    if (has_nul(value)) return InvalidArgument("`env[" + name + "]` contains a NUL byte");
    out.env[name] = value;
  }
  if (env_bytes > kMaxEnvBytes) return too_big("env", env_bytes, kMaxEnvBytes);

  CODEXD_RETURN_IF_ERROR(check_text("justification", request.justification(), kMaxJustificationBytes));
  CODEXD_RETURN_IF_ERROR(check_text("turn_id", request.turn_id(), kMaxLabelBytes));
  CODEXD_RETURN_IF_ERROR(check_text("call_id", request.call_id(), kMaxLabelBytes));
  if (request.prefix_rule_size() > 64) return InvalidArgument("`prefix_rule` has more than 64 tokens");
  for (const auto& token : request.prefix_rule()) {
    CODEXD_RETURN_IF_ERROR(check_text("prefix_rule", token, kMaxPathBytes));
    out.prefix_rule.push_back(token);
  }
  switch (request.sandbox_permissions()) {
    case v1::USE_DEFAULT: break;
    case v1::REQUIRE_ESCALATED: out.require_escalated = true; break;
    default: return InvalidArgument("`sandbox_permissions` must be USE_DEFAULT or REQUIRE_ESCALATED");
  }
  out.justification = request.justification();
  out.turn_id = request.turn_id();
  out.call_id = request.call_id();
  out.dry_run = request.dry_run();
  return out;
}

}  // namespace

Status validate_max_output_tokens(bool has, uint32_t value) {
  if (has && value > kMaxOutputTokens) {
    return InvalidArgument("`max_output_tokens` must be at most " + std::to_string(kMaxOutputTokens) + " (got " +
                           std::to_string(value) + ")");
  }
  return Status::Ok();
}

Result<orchestrator::ExecRequest> validate_exec_command(const v1::ExecCommandRequest& request, const config::Config& config) {
  CODEXD_ASSIGN_OR_RETURN(auto out, validate_common(request, config));
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

Result<orchestrator::ExecRequest> validate_run_command(const v1::RunCommandRequest& request, const config::Config& config) {
  CODEXD_ASSIGN_OR_RETURN(auto out, validate_common(request, config));
  out.tool = orchestrator::Tool::kShellCommand;
  uint32_t timeout = request.has_timeout_ms() ? request.timeout_ms() : 10'000;
  if (timeout == 0 || timeout > kMaxOneShotTimeoutMs) {
    return InvalidArgument("`timeout_ms` must be between 1 and " + std::to_string(kMaxOneShotTimeoutMs) + " (got " +
                           std::to_string(timeout) + ")");
  }
  out.timeout_ms = timeout;
  return out;
}

Status validate_session_id(int32_t session_id) {
  if (session_id <= 0) return InvalidArgument("`session_id` is required (a positive id returned by ExecCommand)");
  return Status::Ok();
}

Status validate_stdin(const std::string& chars, const char* field) {
  if (chars.size() > kMaxStdinBytes) return too_big(field, chars.size(), kMaxStdinBytes);
  return Status::Ok();
}

Result<std::vector<std::string>> validate_policy_check(const v1::CheckPolicyRequest& request, const config::Config& config) {
  const bool has_cmd = !request.cmd().empty();
  const bool has_argv = request.argv_size() > 0;
  if (has_cmd && has_argv) return InvalidArgument("set exactly one of `cmd` and `argv` (both are set)");
  if (!has_cmd && !has_argv) return InvalidArgument("missing command: set `cmd` or `argv`");
  CODEXD_RETURN_IF_ERROR(check_absolute_path("workdir", request.workdir(), false));
  CODEXD_RETURN_IF_ERROR(check_absolute_path("shell", request.shell(), false));
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

}  // namespace codexd::server
