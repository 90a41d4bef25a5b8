// SandboxManager's non-virtual pipeline: validation, the unconfined pass-through and the
// refusal when nothing can confine, once for every backend.
#include "base/lexical_path.h"
#include "platform/sandbox/sandbox.h"

namespace codexd::sandbox {
namespace {

LaunchPlan pass_through(const LaunchRequest& request) {
  LaunchPlan plan;
  plan.backend = Backend::kNone;
  plan.argv = request.argv;
  plan.env = request.env;
  plan.cwd = request.cwd;
  return plan;
}

}  // namespace

Status validate_launch_request(const LaunchRequest& request) {
  if (request.argv.empty() || request.argv.front().empty()) return InvalidArgument("empty command");
  for (const std::string& word : request.argv) {
    if (word.find('\0') != std::string::npos) return InvalidArgument("command word holds a NUL byte");
  }
  return validate_absolute_path(request.cwd, "command cwd");
}

Result<LaunchPlan> SandboxManager::plan(const SandboxSpec& spec, const LaunchRequest& request) const {
  CODEXD_RETURN_IF_ERROR(validate_launch_request(request));
  if (spec.mode == SandboxMode::kDangerFullAccess) {
    LaunchPlan plan = pass_through(request);
    plan.executable = request.argv.front();
    plan.rules.push_back("danger-full-access: no sandbox");
    return plan;
  }
  const CapabilityReport& report = capabilities();
  if (report.chosen == Backend::kNone) {
    std::string reason = "no sandbox backend can enforce " + std::string(to_string(spec.mode));
    for (const std::string& warning : report.warnings) reason += "; " + warning;
    return Unavailable(reason);
  }
  if (spec.supervise_exec && !report.exec_supervision) {
    return Unavailable("exec supervision is configured but the " + std::string(to_string(report.chosen)) +
                       " sandbox cannot supervise execs here (Linux 5.6 with seccomp user notification); "
                       "set [exec] supervision = \"off\" or run on such a kernel");
  }
  CODEXD_ASSIGN_OR_RETURN(LaunchPlan plan, plan_confined(spec, request));
  plan.executable = plan.argv.empty() ? std::string() : plan.argv.front();
  return plan;
}

Result<LaunchPlan> SandboxManager::plan_unconfined(const LaunchRequest& request) const {
  CODEXD_RETURN_IF_ERROR(validate_launch_request(request));
  CODEXD_ASSIGN_OR_RETURN(std::string executable, resolve_unconfined_executable(request));
  LaunchPlan plan = pass_through(request);
  plan.executable = std::move(executable);
  return plan;
}

}  // namespace codexd::sandbox
