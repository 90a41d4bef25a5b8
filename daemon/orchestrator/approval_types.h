// Approval requests as the broker, the reviewers and the audit log see them.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/shared_argv.h"
#include "platform/sandbox/sandbox.h"
#include "policies/rule.h"

namespace codexd::orchestrator {

enum class ReviewDecision { kApproved, kApprovedForSession, kDenied, kAbort, kApprovedWithAmendment };
const char* review_decision_name(ReviewDecision decision);

struct ApprovalReason {
  enum class Kind { kPromptRule, kHeuristic, kEscalation, kSandboxRetry, kNetwork };
  Kind kind = Kind::kHeuristic;
  std::string message;
  std::string justification;
};

// What a reviewer is shown.
struct SandboxSummaryText {
  std::string backend;  // "linux-bwrap" | "none" | ...
  std::string mode;
  std::vector<std::string> writable_roots;
  sandbox::NetworkMode network = sandbox::NetworkMode::kOff;
  std::vector<std::string> denied_read;
  std::vector<std::string> protected_paths;
};

// A network approval: the proxy holds a connection until a reviewer answers.
struct NetworkAccessText {
  std::string host;
  uint16_t port = 0;
  std::string protocol;  // network_rule spelling: http | https | socks5_tcp
  int session_id = 0;
};

// A program inside a supervised sandbox waiting in execve (exec supervision).
struct NestedExecText {
  int session_id = 0;
  std::string parent_command;
  pid_t pid = 0;
  std::string path;
};

struct ApprovalTicket {
  std::string id;
  uid_t requester_uid = 0;
  std::string agent_id;
  SharedArgv argv;  // the plan's own (ExecRequest::argv), not a copy
  std::string cmd;
  std::string workdir;
  ApprovalReason reason;
  std::vector<policy::RuleMatch> matched_rules;
  SandboxSummaryText sandbox;
  std::chrono::system_clock::time_point created_at;
  std::optional<std::chrono::system_clock::time_point> expires_at;
  std::string turn_id;
  std::string call_id;
  bool tty = false;
  SharedArgv proposed_amendment;  // the assessment's (often the argv itself); empty: none
  unsigned attempt = 1;
  std::optional<NetworkAccessText> network;  // reason kNetwork only
  std::optional<NestedExecText> nested;      // a nested exec's approval
};

struct ApprovalOutcome {
  enum class Kind {
    kDecided,            // a reviewer answered: see `decision`
    kTimedOut,           // approvals.timeout_ms passed
    kNoReviewer,         // when_no_reviewer = reject and nobody could answer
    kRequesterGone,      // the waiting client disconnected
    kShutdown,           // the daemon is stopping
  };
  Kind kind = Kind::kDecided;
  ReviewDecision decision = ReviewDecision::kDenied;
  std::optional<uid_t> resolved_by;
  std::string resolved_by_agent;  // the reviewer's own agent label (x-codexd-agent-id), if it sent one
  std::string rationale;
};

const char* outcome_source_name(ApprovalOutcome::Kind kind);

}  // namespace codexd::orchestrator
