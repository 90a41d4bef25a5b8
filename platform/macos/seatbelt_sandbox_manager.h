// The macOS SandboxManager: every command under /usr/bin/sandbox-exec with a policy built
// for its spec. Danger-full-access, request validation and the refusal when Seatbelt is
// unusable are SandboxManager::plan's.
#pragma once

#include <memory>

#include "platform/macos/seatbelt_paths.h"
#include "platform/macos/seatbelt_probe.h"
#include "platform/sandbox/sandbox.h"

namespace codexd::sandbox::macos_backend {

class SeatbeltSandboxManager final : public SandboxManager {
 public:
  // `resolve` empty: resolve_for_seatbelt. Tests inject a probe and a resolver.
  explicit SeatbeltSandboxManager(SeatbeltProbe probe, PathResolver resolve = {});

  const CapabilityReport& capabilities() const override { return probe_.report; }

 protected:
  // build_seatbelt_plan with the probed per-user cache directory.
  Result<LaunchPlan> plan_confined(const SandboxSpec& spec, const LaunchRequest& request) const override;
  // posix::resolve_executable in the child's PATH.
  Result<std::string> resolve_unconfined_executable(const LaunchRequest& request) const override;

 private:
  SeatbeltProbe probe_;
  PathResolver resolve_;
};

// What create_sandbox_manager() returns on macOS: probes /usr/bin/sandbox-exec.
std::unique_ptr<SandboxManager> create_seatbelt_sandbox_manager(const SandboxManagerOptions& options);

}  // namespace codexd::sandbox::macos_backend
