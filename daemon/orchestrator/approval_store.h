// Durable approvals: pending approval requests and "approved for session" grants, kept in
// <state_dir>/approvals.json so a restart or a crash of the daemon forgets neither.
//
// The broker and the session cache hand the store their current contents (set_approvals,
// set_grants) after every change, and the store rewrites the whole (small) file at once,
// before the change is acknowledged to anyone (a reviewer's event, a ResolveApproval reply):
// atomically, as a temp file in the same directory, fsync, rename over, fsync the directory.
// Mode 0600, directory 0700; the file is never opened through a symlink. Changes are
// human-paced (an approval asked, answered, a grant), so one small synchronous write each is
// cheap. Runs on the core io thread. A failed write is logged and kept (last_error: GetStatus
// shows it), never thrown; approvals keep working in memory.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "daemon/orchestrator/approval_types.h"

namespace codexd::orchestrator {

// A pending approval, or a restored one that was resolved while its requester was away and
// waits (until `resolved_at` + the claim window) for the requester to ask again.
struct StoredApproval {
  ApprovalTicket ticket;
  std::optional<ApprovalOutcome> outcome;                            // set: resolved, unclaimed
  std::optional<std::chrono::system_clock::time_point> resolved_at;  // with `outcome`
};

// One approved-for-session scope (ApprovalCache's): keys most recently used first.
struct StoredGrants {
  uid_t uid = 0;
  std::string agent_id;
  std::vector<std::string> keys;
};

struct StoredState {
  std::vector<StoredApproval> approvals;
  std::vector<StoredGrants> grants;
};

inline constexpr int kApprovalStateVersion = 1;

// The file's text ({"version": 1, "approvals": [...], "grants": [...]}) and back. Parsing
// rejects anything malformed (INVALID_ARGUMENT / DATA_LOSS with the reason), and an unknown
// version (FAILED_PRECONDITION).
std::string serialize_approval_state(const StoredState& state);
Result<StoredState> parse_approval_state(std::string_view text);

// Writes `text` to `path` atomically (temp file beside it, fsync, rename, fsync the directory),
// mode 0600, never through a symlink.
Status write_file_atomically(const std::string& path, const std::string& text);

struct LoadedApprovalState {
  bool found = false;          // there was a file (a previous daemon ran here)
  StoredState state;
  std::string corrupt_reason;  // non-empty: the file was unusable and was moved to `moved_to`
  std::string moved_to;
};

class ApprovalStore {
 public:
  // `dir`: the state directory (created 0700 when missing).
  explicit ApprovalStore(std::string dir);

  const std::string& path() const { return path_; }

  // Reads the file. Missing: empty. Corrupt, truncated, a symlink or an unknown version:
  // logged with the reason, moved aside to approvals.json.corrupt-<unix time>, empty. Only
  // an unreadable directory or file is an error (the daemon then starts with none as well).
  Result<LoadedApprovalState> load();

  // The current contents of each part; the file is rewritten before these return.
  void set_approvals(std::vector<StoredApproval> approvals);
  void set_grants(std::vector<StoredGrants> grants);
  // Stop writing (daemon shutdown): what is on disk stays as it is.
  void freeze() { frozen_ = true; }

  // The last write's failure ("" after a good write).
  const std::string& last_error() const { return last_error_; }

 private:
  void save();
  Status ensure_dir();

  std::string dir_;
  std::string path_;
  StoredState state_;
  bool frozen_ = false;
  std::string last_error_;
};

}  // namespace codexd::orchestrator
