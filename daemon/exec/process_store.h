// The ProcessStore: the live sessions, their ids and their owners (Codex unified exec §1.4).
// Runs on the core io thread like the sessions it holds.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "daemon/exec/session.h"
#include "base/status.h"

namespace codexd::exec {

struct StoreLimits {
  size_t max_sessions = 64;        // MAX_UNIFIED_EXEC_PROCESSES
  size_t protected_recent = 8;     // never pruned
  size_t warning_threshold = 60;   // WARNING_UNIFIED_EXEC_PROCESSES
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

  // Stores a session under its reserved id. When the store is full, first removes one
  // session by Codex's prune rule and returns it (the caller has nothing to do: it is released).
  void insert(std::shared_ptr<Session> session);

  // The caller's session: NOT_FOUND "Unknown process id N", or PERMISSION_DENIED for another
  // uid's session. Refreshes last_used.
  Result<std::shared_ptr<Session>> find(int id, const Requester& requester);

  // Removes (reported exit, cancel) and releases: kills what still runs in its group.
  void remove(int id);

  // Sessions visible to the requester, newest first.
  std::vector<std::shared_ptr<Session>> list(const Requester& requester, bool all_users) const;

  // Every session, for shutdown; the store is empty afterwards.
  std::vector<std::shared_ptr<Session>> take_all();

  size_t size() const { return sessions_.size(); }
  uint64_t total_created() const { return total_created_; }
  const StoreLimits& limits() const { return limits_; }
  // Codex's model warning when the store holds >= 60 sessions; empty otherwise.
  std::string session_count_warning() const;

 private:
  StoreLimits limits_;
  IdGenerator ids_;
  std::mt19937 rng_;
  std::map<int, std::shared_ptr<Session>> sessions_;
  std::set<int> reserved_;
  uint64_t total_created_ = 0;
};

}  // namespace codexd::exec
