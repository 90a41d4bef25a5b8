// From a SeatbeltPolicy to the exact thing to exec: `/usr/bin/sandbox-exec -p <policy>
// -DNAME=value... -- <command...>` with the sandbox markers in the environment.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "platform/macos/seatbelt_policy.h"
#include "platform/sandbox/sandbox.h"

namespace codexd::sandbox::macos_backend {

// Always this absolute path, never a PATH lookup: a sandbox-exec planted earlier on PATH would
// otherwise run the command with no sandbox at all. Replacing this one needs root.
inline constexpr std::string_view kSandboxExecPath = "/usr/bin/sandbox-exec";

std::vector<std::string> sandbox_exec_argv(const SeatbeltPolicy& policy,
                                           const std::vector<std::string>& command);

// `env` without any caller-supplied copies of the markers, then CODEX_SANDBOX=seatbelt (what
// Codex tools look for), CODEXD_SANDBOX=macos-seatbelt and, with the network off,
// CODEX_SANDBOX_NETWORK_DISABLED=1.
std::vector<std::string> seatbelt_environment(const std::vector<std::string>& env, NetworkMode network);

// validate_launch_request (sandbox.h) + build_seatbelt_policy + the argv and environment
// above. SeatbeltSandboxManager::plan_confined; callable directly (tests, tools).
Result<LaunchPlan> build_seatbelt_plan(const SandboxSpec& spec, const LaunchRequest& request,
                                       const SeatbeltOptions& options);

}  // namespace codexd::sandbox::macos_backend
