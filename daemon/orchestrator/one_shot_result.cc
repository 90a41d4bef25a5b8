#include "daemon/orchestrator/one_shot_result.h"

#include "base/utf8.h"
#include "daemon/exec/result_text.h"
#include "daemon/exec/truncation.h"

namespace codexd::orchestrator {

bool one_shot_likely_denied(sandbox::Backend backend, const exec::OneShotOutcome& o) {
  if (o.timed_out || o.cancelled) return false;
  return sandbox::is_likely_sandbox_denied(backend, o.exit_code, o.stderr_bytes) ||
         sandbox::is_likely_sandbox_denied(backend, o.exit_code, o.stdout_bytes) ||
         sandbox::is_likely_sandbox_denied(backend, o.exit_code, o.aggregated);
}

std::string one_shot_text(const exec::OneShotOutcome& o) {
  return exec::render_classic_exec_text(o.exit_code, o.wall_time_seconds, utf8_lossy(exec::one_shot_content(o)),
                                        exec::kDefaultMaxOutputTokens);
}

}  // namespace codexd::orchestrator
