#include "daemon/orchestrator/approval_cache.h"

#include <nlohmann/json.hpp>

namespace codexd::orchestrator {

std::string approval_cache_key(const ApprovalKeyInput& input) {
  nlohmann::ordered_json key;
  key["command"] = input.argv;
  key["cwd"] = input.cwd;
  if (input.include_tty) key["tty"] = input.tty;
  key["sandbox_permissions"] = input.require_escalated ? "require_escalated" : "use_default";
  return key.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool ApprovalCache::is_approved(uid_t uid, const std::string& agent_id, const std::string& key) {
  auto scope = scopes_.find({uid, agent_id});
  if (scope == scopes_.end()) return false;
  auto it = scope->second.index.find(key);
  if (it == scope->second.index.end()) return false;
  scope->second.lru.splice(scope->second.lru.begin(), scope->second.lru, it->second);
  return true;
}

void ApprovalCache::approve(uid_t uid, const std::string& agent_id, const std::string& key) {
  if (max_entries_ == 0) return;
  Entries& entries = scopes_[{uid, agent_id}];
  auto it = entries.index.find(key);
  if (it != entries.index.end()) {
    entries.lru.splice(entries.lru.begin(), entries.lru, it->second);
    return;
  }
  entries.lru.push_front(key);
  entries.index[key] = entries.lru.begin();
  while (entries.lru.size() > max_entries_) {
    entries.index.erase(entries.lru.back());
    entries.lru.pop_back();
  }
}

size_t ApprovalCache::size(uid_t uid, const std::string& agent_id) const {
  auto scope = scopes_.find({uid, agent_id});
  return scope == scopes_.end() ? 0 : scope->second.lru.size();
}

}  // namespace codexd::orchestrator
