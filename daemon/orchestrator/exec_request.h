// A validated request to run something, as the orchestrator sees it (the gRPC layer builds
// it from the protobuf after checking every field; see daemon/server/request_validation.h).
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/shared_argv.h"
#include "platform/limits/limits.h"

namespace codexd::orchestrator {

// Who asked, from SO_PEERCRED at accept time (never from the request), plus the
// self-declared agent label (x-codexd-agent-id metadata: display and audit only).
struct Caller {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
  std::string agent_id;
  bool is_admin = false;
};

enum class Tool {
  kUnifiedExec,   // ExecCommand: a session
  kShellCommand,  // RunCommand: classic one-shot
};

struct ExecRequest {
  Tool tool = Tool::kUnifiedExec;
  // What runs: [shell, -lc|-c, script] or the argv given. One buffer that the plan's policy
  // assessment and an approval's ticket share (issue 19 item 5).
  SharedArgv argv;
  // The request used `cmd`: argv is [shell, -lc|-c, cmd], and script() is that cmd (argv's
  // own word, not a second copy of it).
  bool from_cmd = false;
  std::string workdir;                  // absolute
  bool tty = false;
  unsigned short rows = 24;
  unsigned short cols = 80;
  std::map<std::string, std::string> env;  // the caller's extra variables
  bool require_escalated = false;
  std::string justification;
  std::string turn_id;
  std::string call_id;
  std::vector<std::string> prefix_rule;
  bool dry_run = false;
  uint32_t timeout_ms = 0;              // kShellCommand only
  Caller caller;
  // The request's own limits (validated against its agent's budget), over limits.* defaults.
  limits::ResourceLimits limits;

  // The `cmd` text when the request used cmd, else null.
  const std::string* script() const { return from_cmd && argv.size() == 3 ? &argv[2] : nullptr; }
};

// Why nothing ran. A normal result for the caller, not an RPC error.
struct Rejection {
  enum class Reason {
    kForbiddenByPolicy,
    kDeniedByReviewer,
    kAborted,
    kApprovalTimedOut,
    kNoReviewer,
    kSpawnFailed,
    kSandboxUnavailable,
    kEscalationNotAllowed,
  };
  Reason reason = Reason::kForbiddenByPolicy;
  std::string message;
  std::string justification;
};

const char* rejection_reason_name(Rejection::Reason reason);

// The text an agent hands to its model for a rejection (each reason reads differently).
std::string rejection_model_text(const ExecRequest& request, const Rejection& rejection);


}  // namespace codexd::orchestrator
