// Durable approvals: pending approval requests and "approved for session" grants, kept in
// <state_dir> so a restart or a crash of the daemon forgets neither.
//
// Each approval is a file of its own, approvals.d/<id>.json; the grants are approvals.json.
// The broker and the session cache hand the store their current contents (set_approvals,
// set_grants) after every change, and the store writes what changed before the change is
// acknowledged to anyone (a reviewer's event, a ResolveApproval reply): a new or newly
// resolved approval's file, the removal of one that is gone, or the grants file. Every write
// is atomic (a temp file in the same directory, fsync, rename over, fsync the directory), mode
// 0600, directory 0700, never through a symlink. One file per approval keeps a change's cost
// to that approval: a request's argv may be 1 MiB and a uid may have 32 pending (default), and
// rewriting them all at each change (the single file before approvals.d) cost seconds of the
// core io thread in a burst. Runs on the core io thread. A failed write is logged and kept
// (last_error: GetStatus shows it), never thrown; approvals keep working in memory.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
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
// The same, pointing at a ticket its owner keeps: what the broker hands over on every change,
// without copying each pending ticket (one holds its whole command; issue 19).
struct StoredApprovalRef {
  const ApprovalTicket* ticket = nullptr;
  std::optional<ApprovalOutcome> outcome;
  std::optional<std::chrono::system_clock::time_point> resolved_at;
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

// approvals.json's text ({"version": 1, "approvals": [...], "grants": [...]}; "approvals" is
// empty since approvals.d, and read for the files of earlier daemons) and back. Parsing
// rejects anything malformed (INVALID_ARGUMENT / DATA_LOSS with the reason), and an unknown
// version (FAILED_PRECONDITION).
std::string serialize_approval_state(const StoredState& state);
Result<StoredState> parse_approval_state(std::string_view text);

// One approval's file (approvals.d/<id>.json) and back; parsing fails with the reason.
std::string serialize_stored_approval(const StoredApproval& approval);
Result<StoredApproval> parse_stored_approval(std::string_view text);

// Writes `text` to `path` atomically (temp file beside it, fsync, rename, fsync the directory),
// mode 0600, never through a symlink.
Status write_file_atomically(const std::string& path, const std::string& text);

struct LoadedApprovalState {
  bool found = false;          // there was a file (a previous daemon ran here)
  StoredState state;
  std::string corrupt_reason;  // non-empty: the file was unusable and was moved to `moved_to`
  std::string moved_to;
  // Approval files that could not be used ("<name>: <reason>"), moved aside as
  // <name>.corrupt-<unix time>; the others were loaded.
  std::vector<std::string> set_aside;
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

  // The current contents of each part; what changed is on disk before these return.
  void set_approvals(const std::vector<StoredApproval>& approvals);
  void set_approval_refs(const std::vector<StoredApprovalRef>& approvals);
  void set_grants(std::vector<StoredGrants> grants);
  // Stop writing (daemon shutdown): what is on disk stays as it is.
  void freeze() { frozen_ = true; }

  // The last write's failure ("" after a good write), or why load() found no usable directory.
  const std::string& last_error() const { return last_error_; }

 private:
  void save();  // approvals.json (the grants)
  Status ensure_dir();
  std::string file_of(const std::string& id) const;
  void load_approval_files(LoadedApprovalState& loaded);

  std::string dir_;
  std::string path_;
  std::string approvals_dir_;
  StoredState state_;  // the grants
  std::map<std::string, bool> on_disk_;  // approval id -> saved as resolved
  bool main_holds_approvals_ = false;    // approvals.json of an earlier daemon still lists some
  bool frozen_ = false;
  std::string last_error_;
};

}  // namespace codexd::orchestrator
