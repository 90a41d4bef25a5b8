// What a finished one-shot (RunCommand, RunSandboxed) tells its caller, computed once for
// every entry point: whether it looks like a sandbox denial, and the model-visible text.
#pragma once

#include <string>

#include "daemon/exec/one_shot.h"
#include "platform/sandbox/sandbox.h"

namespace codexd::orchestrator {

// Codex looks for the denial keywords in stderr, stdout and the aggregated output; a timeout
// or a cancellation is never a denial.
bool one_shot_likely_denied(sandbox::Backend backend, const exec::OneShotOutcome& outcome);

// Codex's classic exec text (exit code, wall time, output truncated to the default budget).
std::string one_shot_text(const exec::OneShotOutcome& outcome);

}  // namespace codexd::orchestrator
