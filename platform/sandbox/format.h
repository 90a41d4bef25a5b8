// Human-readable renderings for `codexd --print-sandbox-plan`, `codexctl sandbox --plan`,
// Admin.GetStatus and startup warnings. Commands are quoted with
// base/shell_quote.h, so a plan can be pasted into a shell.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "platform/sandbox/sandbox.h"

namespace codexd::sandbox {

std::string format_sandbox_spec(const SandboxSpec& spec);
std::string format_launch_plan(const LaunchPlan& plan);
std::string format_capability_report(const CapabilityReport& report);

}  // namespace codexd::sandbox
