#include "platform/macos/seatbelt_sandbox_manager.h"

#include "platform/macos/seatbelt_command.h"
#include "platform/posix/executable_path.h"

namespace codexd::sandbox::macos_backend {

SeatbeltSandboxManager::SeatbeltSandboxManager(SeatbeltProbe probe, PathResolver resolve)
    : probe_(std::move(probe)), resolve_(std::move(resolve)) {}

Result<LaunchPlan> SeatbeltSandboxManager::plan_confined(const SandboxSpec& spec,
                                                         const LaunchRequest& request) const {
  SeatbeltOptions options;
  options.darwin_user_cache_dir = probe_.darwin_user_cache_dir;
  options.resolve = resolve_;
  return build_seatbelt_plan(spec, request, options);
}

Result<std::string> SeatbeltSandboxManager::resolve_unconfined_executable(const LaunchRequest& request) const {
  return posix::resolve_executable(request.argv.front(), request.env, request.cwd);
}

std::unique_ptr<SandboxManager> create_seatbelt_sandbox_manager(const SandboxManagerOptions& options) {
  return std::make_unique<SeatbeltSandboxManager>(probe_seatbelt(options, std::string(kSandboxExecPath)));
}

}  // namespace codexd::sandbox::macos_backend
