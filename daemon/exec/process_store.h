// The ProcessStore: the live sessions, their ids and their owners (Codex unified exec §1.4).
// Runs on the core io thread like the sessions it holds.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "daemon/exec/session.h"
#include "base/status.h"

namespace codexd::exec {

// Limits are per owner, so one user (or agent) filling its sessions never evicts another's.
struct StoreLimits {
  size_t max_sessions = 64;            // per uid: Codex's MAX_UNIFIED_EXEC_PROCESSES, pruned within the uid
  size_t max_sessions_per_agent = 0;   // per agent within a uid, pruned within the agent; 0: no such limit
  size_t max_sessions_total = 1024;    // the whole daemon: past it new sessions are refused, nothing is pruned
  size_t protected_recent = 8;         // an owner's newest sessions, never pruned
  size_t warning_threshold = 60;       // WARNING_UNIFIED_EXEC_PROCESSES (of the uid's sessions)
  size_t tombstones = 512;             // pruned sessions whose fate their owner can still ask about
};

// Who is asking (from SO_PEERCRED, never from the request).
struct Requester {
  uid_t uid = 0;
  bool is_admin = false;  // may see and act on every uid's sessions
};

class ProcessStore {
 public:
  using IdGenerator = std::function<int()>;

  explicit ProcessStore(StoreLimits limits = {}, IdGenerator ids = {});

  // A fresh random id in [1000, 100000), reserved until released or its session is removed.
  Result<int> reserve_id();
  void release_id(int id);

  // Before a session of (uid, agent) is spawned: when the owner is at its limit, prunes the
  // owner's own least recently used session (Codex's rule: exited first, never its 8 newest);
  // RESOURCE_EXHAUSTED naming the limit when nothing of its own can go, or when the daemon
  // holds max_sessions_total. Never touches another owner's session.
  Status make_room(uid_t uid, const std::string& agent_id);

  // Stores a session under its reserved id (after make_room).
  void insert(std::shared_ptr<Session> session);
  // Stores a session a previous daemon started, under its own id (AlreadyExists when taken).
  Status adopt(std::shared_ptr<Session> session);

  // The caller's session. Another uid's session answers exactly like one that does not exist
  // (NOT_FOUND "Unknown process id N"), so ids do not leak; a session of the caller's that was
  // pruned says so, with its exit code if it had exited. Refreshes last_used.
  Result<std::shared_ptr<Session>> find(int id, const Requester& requester);

  // Removes (reported exit, cancel) and releases: kills what still runs in its group.
  void remove(int id);

  // A finished session whose final result was just reported: removed like remove(), but kept
  // aside for kReportedRetention (at most kMaxReported of them, oldest dropped first), so that
  // a client that lost that final result can read it again with Poll.from_offset. Only
  // find_reported() sees it; every other call answers "Unknown process id N" as before.
  static constexpr std::chrono::seconds kReportedRetention{60};
  static constexpr size_t kMaxReported = 64;
  void retire(int id);
  // The caller's retired session, or null (expired, dropped, another uid's, never existed).
  std::shared_ptr<Session> find_reported(int id, const Requester& requester);

  // Sessions visible to the requester, newest first.
  std::vector<std::shared_ptr<Session>> list(const Requester& requester, bool all_users) const;

  // Every session, for shutdown; the store is empty and closed afterwards: every later
  // reserve_id/make_room/adopt/find answers UNAVAILABLE (the daemon is going away).
  std::vector<std::shared_ptr<Session>> take_all();

  size_t size() const { return sessions_.size(); }
  uint64_t total_created() const { return total_created_; }
  // Every output byte of this store's sessions: the removed ones (counted at removal) and what
  // the live ones produced so far.
  uint64_t total_output_bytes() const;
  uint64_t created_by(uid_t uid) const {
    auto it = created_by_.find(uid);
    return it == created_by_.end() ? 0 : it->second;
  }
  const StoreLimits& limits() const { return limits_; }
  // Codex's model warning when the uid holds >= 60 sessions; empty otherwise.
  std::string session_count_warning(uid_t uid) const;
  size_t count_for(uid_t uid, const std::string* agent_id = nullptr) const;

 private:
  struct Tombstone {
    uid_t owner_uid = 0;
    std::optional<int> exit_code;  // nullopt: it was still running and was killed
  };
  // Prunes one of the sessions `in_scope` accepts; false when all of them are protected.
  bool prune_one(const std::function<bool(const Session&)>& in_scope);
  void bury(const Session& session);

  StoreLimits limits_;
  IdGenerator ids_;
  std::mt19937 rng_;
  std::map<int, std::shared_ptr<Session>> sessions_;
  std::set<int> reserved_;
  struct Reported {
    std::shared_ptr<Session> session;
    Clock::time_point expires;
  };
  void drop_expired_reported();
  std::map<int, Tombstone> tombstones_;
  std::map<int, Reported> reported_;
  std::deque<int> reported_order_;  // oldest first
  std::deque<int> tombstone_order_;  // oldest first, bounded by limits_.tombstones
  uint64_t total_created_ = 0;
  bool closed_ = false;  // set by take_all()
  uint64_t output_bytes_of_removed_ = 0;
  std::map<uid_t, uint64_t> created_by_;  // what GetStatus shows a caller who is not an admin
};

}  // namespace codexd::exec
