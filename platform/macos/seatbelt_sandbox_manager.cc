#include "platform/macos/seatbelt_sandbox_manager.h"

#include "platform/macos/seatbelt_command.h"

namespace codexd::sandbox::macos_backend {

SeatbeltSandboxManager::SeatbeltSandboxManager(SeatbeltProbe probe, PathResolver resolve)
    : probe_(std::move(probe)), resolve_(std::move(resolve)) {}

Result<LaunchPlan> SeatbeltSandboxManager::plan(const SandboxSpec& spec, const LaunchRequest& request) const {
  CODEXD_RETURN_IF_ERROR(validate_launch_request(request));
  if (spec.mode == SandboxMode::kDangerFullAccess) {
    LaunchPlan plan;
    plan.backend = Backend::kNone;
    plan.argv = request.argv;
    plan.env = request.env;
    plan.cwd = request.cwd;
    plan.rules.push_back("danger-full-access: no sandbox");
    return plan;
  }
  if (probe_.report.chosen != Backend::kMacosSeatbelt) {
    std::string reason = "Seatbelt cannot enforce " + std::string(to_string(spec.mode));
    for (const std::string& warning : probe_.report.warnings) reason += "; " + warning;
    return Unavailable(reason);
  }
  SeatbeltOptions options;
  options.darwin_user_cache_dir = probe_.darwin_user_cache_dir;
  options.resolve = resolve_;
  return build_seatbelt_plan(spec, request, options);
}

std::unique_ptr<SandboxManager> create_seatbelt_sandbox_manager(const SandboxManagerOptions& options) {
  return std::make_unique<SeatbeltSandboxManager>(probe_seatbelt(options, std::string(kSandboxExecPath)));
}

}  // namespace codexd::sandbox::macos_backend
