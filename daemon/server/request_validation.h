// Every field of every request is checked here before anything else sees it. A bad field is
// INVALID_ARGUMENT with a message naming the field and saying what to fix.
#pragma once

#include <chrono>

#include "codexd/v1/approvals.pb.h"
#include "codexd/v1/exec.pb.h"
#include "codexd/v1/policy.pb.h"
#include "codexd/v1/sandbox.pb.h"
#include "daemon/config/config.h"
#include "daemon/exec/exec_engine.h"
#include "daemon/orchestrator/approval_types.h"
#include "daemon/orchestrator/exec_request.h"
#include "daemon/orchestrator/launch_builder.h"
#include "platform/sandbox/sandbox.h"
#include "base/status.h"

namespace codexd::server {

inline constexpr size_t kMaxCommandBytes = 1024 * 1024;   // cmd, or argv in total
inline constexpr size_t kMaxArgs = 10'000;
inline constexpr size_t kMaxPathBytes = 4096;
inline constexpr size_t kMaxStdinBytes = 1024 * 1024;
inline constexpr size_t kMaxEnvEntries = 1000;
inline constexpr size_t kMaxEnvBytes = 1024 * 1024;
inline constexpr size_t kMaxLabelBytes = 256;            // turn_id, call_id
inline constexpr size_t kMaxJustificationBytes = 4096;
inline constexpr uint32_t kMaxOutputTokens = 1'000'000;
inline constexpr uint32_t kMaxTerminalSize = 1000;
inline constexpr uint32_t kMaxOneShotTimeoutMs = 86'400'000;

// `agent_id`: the caller's agent, whose budget bounds the limits a request may ask for.
Result<orchestrator::ExecRequest> validate_exec_command(const v1::ExecCommandRequest& request, const config::Config& config,
                                                        const std::string& agent_id = "");
Result<orchestrator::ExecRequest> validate_run_command(const v1::RunCommandRequest& request, const config::Config& config,
                                                       const std::string& agent_id = "");
// `limits`: at most the agent's budget for each limit, cpu_weight 1..10000; the error names
// the field and what may be asked (INVALID_ARGUMENT).
Result<limits::ResourceLimits> validate_requested_limits(const v1::ResourceLimitsRequest& request,
                                                         const limits::ResourceLimits& agent_budget);
// Sandbox.RunSandboxed: the sandbox policy as asked (danger-full-access refused), a forced
// backend, and what to launch.
struct SandboxRunInput {
  sandbox::SandboxPolicy policy;
  sandbox::BackendPreference backend = sandbox::BackendPreference::kAuto;
  orchestrator::LaunchInput launch;
  uint32_t timeout_ms = 10'000;
  bool plan_only = false;
};
Result<SandboxRunInput> validate_sandbox_run(const v1::SandboxRunRequest& request);

Status validate_session_id(int32_t session_id);
// The Exec service's calls on a session, each checked as a whole (what its handler runs first).
Status validate_write_stdin(const v1::WriteStdinRequest& request);
// Poll.from_offset: a re-read needs an output budget (max_output_tokens > 0) to move forward.
Status validate_poll(const v1::PollRequest& request);
struct CancelInput {
  exec::ExecEngine::CancelMode mode = exec::ExecEngine::CancelMode::kTerminate;
  std::chrono::milliseconds grace{2000};  // grace_ms, at most 60000; unset: 2000
};
Result<CancelInput> validate_cancel(const v1::CancelRequest& request);
Status validate_send_input(const v1::SendInputRequest& request);
Status validate_resize_terminal(const v1::ResizeTerminalRequest& request);
// Approvals.ResolveApproval: the approval id's shape, the rationale's size, the decision.
Result<orchestrator::ReviewDecision> validate_resolve_approval(const v1::ResolveApprovalRequest& request);
Result<std::vector<std::string>> validate_policy_check(const v1::CheckPolicyRequest& request, const config::Config& config);
// `sandbox_permissions` of ExecCommand, RunCommand and CheckPolicy: true when the request asks
// to run outside the sandbox. Unset (SANDBOX_PERMISSIONS_UNSPECIFIED) is USE_DEFAULT; a number
// outside the enum (a newer or broken client) is INVALID_ARGUMENT naming the values to use.
Result<bool> validate_sandbox_permissions(v1::SandboxPermissions permissions);
// Cancel's `mode`: unset (MODE_UNSPECIFIED) is TERMINATE; a number outside the enum is
// INVALID_ARGUMENT naming the values to use.
Result<exec::ExecEngine::CancelMode> validate_cancel_mode(v1::CancelRequest::Mode mode);

}  // namespace codexd::server
