// Exec supervision, the decisions (docs/sandbox.md "Exec supervision"): every program a
// supervised sandbox starts waits in execve until this answers. The first exec of a sandbox
// is its command itself, already admitted; every later one is checked against the loaded
// rules only (prefix rules and host_executable, never the known-safe/dangerous heuristics nor
// the approval policy's "ask about everything unknown": a build that runs 10,000 compilers
// must not ask 10,000 questions):
//   forbidden -> the exec fails with EACCES and the command's stderr gets a line naming the rule;
//   prompt    -> the process waits (no daemon thread does) for a reviewer's answer;
//   allow, or no rule -> it runs.
// In audit mode every exec runs and is recorded with what enforce would have decided.
// Every exec is one line of the audit log (pid, parent, path, argv; never the environment).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "base/unique_fd.h"
#include "daemon/config/config.h"
#include "daemon/exec/sandbox_channel.h"
#include "daemon/orchestrator/approval_broker.h"
#include "daemon/orchestrator/audit_log.h"
#include "daemon/orchestrator/policy_store.h"
#include "platform/sandbox/exec_notify.h"

namespace codexd::orchestrator {

struct ExecSupervisorDeps {
  boost::asio::io_context* core = nullptr;  // where the relays are watched, the broker and policy live
  const config::Config* config = nullptr;
  const PolicyStore* policies = nullptr;
  ApprovalBroker* broker = nullptr;
  AuditLog* audit = nullptr;
};

// What the rules say about one nested exec.
struct NestedExecVerdict {
  policy::Decision decision = policy::Decision::kAllow;
  bool matched_rule = false;
  std::string rule;    // the deciding rule: its prefix and where it is defined
  std::string reason;  // its justification, if any
};

// The rules' verdict for a program started as `path` with `argv`: matched with the path's
// name in argv[0] (what runs, whatever argv[0] claims) and, when argv[0] names another
// program, with argv as given too; the strictest wins.
NestedExecVerdict assess_nested_exec(const policy::Policy& policy, const std::string& path,
                                     const std::vector<std::string>& argv, const std::string& cwd);

// One exec of a session's trace (codexctl trace), as the audit log has it.
struct TracedExec {
  int64_t at_unix_ms = 0;
  ExecAuditRecord record;
};

// What a supervised session ran, newest kept: at most kTraceBytes of paths and words (argv cut
// as in the audit log), older execs dropped and counted.
struct ExecTrace {
  static constexpr size_t kTraceBytes = 256 * 1024;
  uid_t uid = 0;
  std::string agent_id;
  std::string mode;  // audit | enforce
  std::deque<TracedExec> execs;
  size_t bytes = 0;
  uint64_t dropped = 0;
  bool ended = false;  // the command has exited (or the daemon let go of it)
};

class ExecSupervisor : public std::enable_shared_from_this<ExecSupervisor> {
 public:
  explicit ExecSupervisor(ExecSupervisorDeps deps) : deps_(std::move(deps)) {}

  // Core thread. Watches `relay` (a sandbox's exec relay, its keeper at the other end) for
  // `owner`'s command until the returned handle is dropped. Execs still waiting then wait for
  // the next daemon (a durable session's shim keeps a copy of the relay), or fail when the
  // sandbox's last copy closes.
  std::shared_ptr<void> supervise(UniqueFd relay, exec::ChannelOwner owner);

  // Counts since start, for GetStatus and metrics.
  struct Counts {
    uint64_t execs = 0;      // nested execs decided (the commands themselves not counted)
    uint64_t refused = 0;
    uint64_t asked = 0;
  };
  const Counts& counts() const { return counts_; }

  // Core thread. The trace of session `session_id` if `caller` owns it (or `admin`); NOT_FOUND
  // otherwise, with the same message whether it exists or not (ids do not leak). Traces of
  // ended sessions are kept for the last kEndedTraces of them.
  static constexpr size_t kEndedTraces = 64;
  Result<const ExecTrace*> trace(int session_id, uid_t caller, bool admin) const;

 private:
  class Watch;
  friend class Watch;

  ExecTrace* open_trace(const exec::ChannelOwner& owner, config::ExecSupervision mode);
  void append(int session_id, const ExecAuditRecord& record);
  void close_trace(int session_id);

  ExecSupervisorDeps deps_;
  Counts counts_;
  std::map<int, ExecTrace> traces_;  // by session id; one-shot commands (id 0) have none
  std::deque<int> ended_;            // ended traces, oldest first
};

}  // namespace codexd::orchestrator
