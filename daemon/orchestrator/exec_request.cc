#include "daemon/orchestrator/exec_request.h"

#include <cctype>
#include <string_view>

#include "base/shell_quote.h"

namespace codexd::orchestrator {

const char* rejection_reason_name(Rejection::Reason reason) {
  switch (reason) {
    case Rejection::Reason::kForbiddenByPolicy: return "forbidden_by_policy";
    case Rejection::Reason::kDeniedByReviewer: return "denied_by_reviewer";
    case Rejection::Reason::kAborted: return "aborted";
    case Rejection::Reason::kApprovalTimedOut: return "approval_timed_out";
    case Rejection::Reason::kNoReviewer: return "no_reviewer";
    case Rejection::Reason::kSpawnFailed: return "spawn_failed";
    case Rejection::Reason::kSandboxUnavailable: return "sandbox_unavailable";
    case Rejection::Reason::kEscalationNotAllowed: return "escalation_not_allowed";
  }
  return "unknown";
}

std::string rejection_model_text(const ExecRequest& request, const Rejection& rejection) {
  const std::string what = request.script() ? *request.script() : shell_join(request.argv);
  const std::string tool = request.tool == Tool::kUnifiedExec ? "exec_command" : "shell_command";
  switch (rejection.reason) {
    case Rejection::Reason::kForbiddenByPolicy:
      if (!rejection.justification.empty()) return "`" + what + "` rejected: blocked by policy: " + rejection.justification;
      // No rule justification: the policy's own reason says why (a prompt the approval policy
      // cannot ask, a dangerous command under `never`, a rule without a justification).
      return rejection.message.empty() ? "`" + what + "` rejected: blocked by policy" : rejection.message;
    case Rejection::Reason::kDeniedByReviewer:
      return "rejected by user" + (rejection.message.empty() ? std::string() : ": " + rejection.message);
    case Rejection::Reason::kAborted:
      // Why matters to the agent: a reviewer's abort means stop; a disconnect or shutdown does not.
      return "aborted: `" + what + "` did not run" + (rejection.message.empty() ? std::string() : ": " + rejection.message);
    case Rejection::Reason::kApprovalTimedOut:
      return "approval request for `" + what + "` timed out; the command did not run";
    case Rejection::Reason::kNoReviewer:
      return "no reviewer is available to approve `" + what + "`; the command did not run";
    case Rejection::Reason::kSpawnFailed:
      return tool + " failed for `" + what + "`: Failed to create unified exec process: " + rejection.message;
    case Rejection::Reason::kSandboxUnavailable:
      return tool + " failed for `" + what + "`: sandbox unavailable: " + rejection.message;
    case Rejection::Reason::kEscalationNotAllowed:
      return rejection.message;
  }
  return rejection.message;
}

}  // namespace codexd::orchestrator
