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
  persist();
}

void ApprovalCache::persist() {
  if (!store_) return;
  std::vector<StoredGrants> grants;
  for (const auto& [scope, entries] : scopes_) {
    if (entries.lru.empty()) continue;
    grants.push_back(StoredGrants{scope.first, scope.second, {entries.lru.begin(), entries.lru.end()}});
  }
  store_->set_grants(std::move(grants));
}

size_t ApprovalCache::restore(const std::vector<StoredGrants>& grants) {
  if (max_entries_ == 0) return 0;
  ApprovalStore* store = store_;
  store_ = nullptr;  // one save at the end, not one per key
  for (const auto& g : grants) {
    // Oldest first, so the most recent ends at the front.
    for (auto it = g.keys.rbegin(); it != g.keys.rend(); ++it) approve(g.uid, g.agent_id, *it);
  }
  store_ = store;
  size_t total = 0;
  for (const auto& [scope, entries] : scopes_) total += entries.lru.size();
  return total;
}

size_t ApprovalCache::size(uid_t uid, const std::string& agent_id) const {
  auto scope = scopes_.find({uid, agent_id});
  return scope == scopes_.end() ? 0 : scope->second.lru.size();
}

}  // namespace codexd::orchestrator
