// The decision audit log: one JSON line per call. It records what was decided, never what
// ran: no command, cwd, environment, justification or output ever reaches it. The call id
// is recorded as a keyed hash (HMAC-SHA256 with a per-daemon random secret) so lines of one
// call can be correlated without revealing the id.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "platform/limits/limits.h"

#include <nlohmann/json.hpp>

namespace spdlog {
class logger;
}

namespace codexd::orchestrator {

struct AuditRecord {
  std::string tool;               // exec_command | shell_command
  std::string agent_id;           // self-declared label (caller metadata)
  uid_t uid = 0;
  std::string turn_id;
  std::string call_id;            // hashed before writing
  std::string approval_policy;
  std::string requirement;        // skip | skip_bypass_sandbox | needs_approval | forbidden
  bool reviewed = false;          // a reviewer was asked
  std::optional<uid_t> reviewer_uid;  // who answered (the last answer, for an escalated retry)
  std::string reviewer_agent;     // the reviewer's own agent label, if it sent one
  std::string decision;           // approved | approved_for_session | denied | abort | cached | none | ...
  std::string sandbox_override;   // none | bypass | escalation_downgraded
  std::string initial_sandbox;    // linux-bwrap | linux-landlock | none
  std::string attempt;            // first | escalated
  std::string outcome;            // success | rejected | sandbox_denied | process_error | cancelled
  std::optional<int> exit_code;
  std::string termination;        // exited | signalled | timed_out | cancelled | out_of_memory | process_limit ("" = none)
  std::optional<limits::ResourceUsage> usage;  // what the command used (measured ones only)
  double approval_wait_ms = 0;
  double duration_ms = 0;
};

// One connection through the network proxy: who, where, what was decided, how much moved.
// Never the request's path, query, headers or body.
struct NetworkAuditRecord {
  std::string agent_id;
  uid_t uid = 0;
  int session_id = 0;      // 0: a one-shot command
  std::string host;
  uint16_t port = 0;
  std::string protocol;    // http | https | socks5_tcp
  bool allowed = false;
  std::string reason;
  std::string address;     // ip:port connected to, "" if none
  uint64_t bytes_up = 0;
  uint64_t bytes_down = 0;
  uint64_t duration_ms = 0;
  std::string error;
};

// One program started inside a supervised sandbox (exec supervision). The program and its
// words are recorded (that is the point of the trace), the environment never; each word is cut
// at 256 bytes and the list at 64 words, so a line stays small.
struct ExecAuditRecord {
  std::string agent_id;
  uid_t uid = 0;
  int session_id = 0;     // 0: a one-shot command
  pid_t pid = 0;          // in the daemon's pid namespace
  pid_t parent_pid = 0;
  // The nearest ancestor with an exec of its own in this sandbox (a subshell that only forked
  // sits between), 0 if none: where the exec hangs in `codexctl trace`.
  pid_t traced_parent_pid = 0;
  std::string path;
  std::vector<std::string> argv;
  bool command = false;   // the sandbox's own command (admitted before it ran), not a nested exec
  std::string decision;   // allow | forbidden | prompt
  std::string outcome;    // ran | refused | approved | denied | would_refuse | would_ask
  std::string rule;       // the deciding rule, "" when none matched
  std::string mode;       // audit | enforce
};

// Something that happened to the daemon itself (a restart that adopted sessions).
struct DaemonAuditRecord {
  std::string event;   // restart
  std::string detail;  // "adopted 3 session(s), 0 lost"
};

// The daemon's saved approval state at start: what was restored, or why the file was unusable.
// Counts and the state file's path only, never what the approvals are about.
struct ApprovalStateAuditRecord {
  enum class Event { kRestored, kCorrupt };
  Event event = Event::kRestored;
  size_t pending = 0;    // pending approvals restored
  size_t resolved = 0;   // restored resolved-but-unclaimed (including expired while down)
  size_t timed_out = 0;  // of `resolved`: expired while the daemon was down
  size_t grants = 0;     // approved-for-session keys restored
  std::string state_file;
  std::string reason;    // kCorrupt: what is wrong
  std::string moved_to;  // kCorrupt: where the file went ("" if it could not be moved)
};

class ReopenableFileSink;  // audit_log.cc

class AuditLog {
 public:
  // `file` empty: no file; `journald`: also send to the journal. Neither: a no-op log.
  static Result<std::unique_ptr<AuditLog>> open(const std::string& file, bool journald);
  ~AuditLog();

  void record(const AuditRecord& record);
  void record(const NetworkAuditRecord& record);  // thread-safe, like record(AuditRecord)
  void record(const DaemonAuditRecord& record);
  void record(const ExecAuditRecord& record);
  void record(const ApprovalStateAuditRecord& record);
  std::string hash_call_id(const std::string& call_id) const;
  void flush();
  // The file again by its path (SIGHUP, after logrotate moved it). Thread-safe.
  Status reopen();

 private:
  AuditLog() = default;
  void emit(const nlohmann::ordered_json& line);
  std::shared_ptr<spdlog::logger> logger_;
  std::shared_ptr<ReopenableFileSink> file_sink_;
  bool journald_ = false;
  std::string secret_;  // 32 random bytes
};

}  // namespace codexd::orchestrator
