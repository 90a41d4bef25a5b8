// "Approved for session": remembered approvals, keyed as Codex keys them (canonical command,
// cwd, tty, sandbox permissions), scoped to the requesting uid and agent id, bounded (LRU).
#pragma once

#include <sys/types.h>

#include <list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "daemon/orchestrator/approval_store.h"

namespace codexd::orchestrator {

struct ApprovalKeyInput {
  std::vector<std::string> argv;  // canonicalized by the caller (policy::canonicalize_command_for_approval)
  std::string cwd;
  bool tty = false;
  bool include_tty = true;  // shell-command keys have no tty
  bool require_escalated = false;
};

// The serialized key (JSON), e.g. {"command":["ls"],"cwd":"/w","sandbox_permissions":"use_default","tty":false}
std::string approval_cache_key(const ApprovalKeyInput& input);

class ApprovalCache {
 public:
  explicit ApprovalCache(size_t max_entries_per_scope) : max_entries_(max_entries_per_scope) {}

  bool is_approved(uid_t uid, const std::string& agent_id, const std::string& key);
  void approve(uid_t uid, const std::string& agent_id, const std::string& key);
  size_t size(uid_t uid, const std::string& agent_id) const;

  // Grants are saved there after every new one (the LRU order as of the last grant); null:
  // nowhere.
  void set_store(ApprovalStore* store) { store_ = store; }
  // What a previous daemon saved (same scopes, same bound). Returns the number of keys.
  size_t restore(const std::vector<StoredGrants>& grants);

 private:
  using Scope = std::pair<uid_t, std::string>;
  struct Entries {
    std::list<std::string> lru;  // front: most recent
    std::map<std::string, std::list<std::string>::iterator> index;
  };
  void persist();
  size_t max_entries_;
  std::map<Scope, Entries> scopes_;
  ApprovalStore* store_ = nullptr;
};

}  // namespace codexd::orchestrator
