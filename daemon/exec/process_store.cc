#include "daemon/exec/process_store.h"

#include <algorithm>

#include "daemon/exec/pruning.h"

namespace codexd::exec {

namespace {
constexpr int kMinSessionId = 1000;
constexpr int kMaxSessionIdExclusive = 100000;
}  // namespace

ProcessStore::ProcessStore(StoreLimits limits, IdGenerator ids)
    : limits_(limits), ids_(std::move(ids)), rng_(std::random_device{}()) {}

Result<int> ProcessStore::reserve_id() {
  if (reserved_.size() >= static_cast<size_t>(kMaxSessionIdExclusive - kMinSessionId)) {
    return ResourceExhausted("no free session id");
  }
  std::uniform_int_distribution<int> dist(kMinSessionId, kMaxSessionIdExclusive - 1);
  for (;;) {
    int id = ids_ ? ids_() : dist(rng_);
    if (reserved_.insert(id).second) return id;
  }
}

void ProcessStore::release_id(int id) { reserved_.erase(id); }

void ProcessStore::insert(std::shared_ptr<Session> session) {
  if (sessions_.size() >= limits_.max_sessions) {
    std::vector<PruneCandidate> candidates;
    candidates.reserve(sessions_.size());
    for (const auto& [id, s] : sessions_) candidates.push_back({id, s->last_used(), s->has_exited()});
    if (auto victim = choose_session_to_prune(std::move(candidates), limits_.protected_recent)) remove(*victim);
  }
  ++total_created_;
  reserved_.insert(session->id());
  sessions_[session->id()] = std::move(session);
}

Result<std::shared_ptr<Session>> ProcessStore::find(int id, const Requester& requester) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return NotFound("Unknown process id " + std::to_string(id));
  if (it->second->metadata().owner_uid != requester.uid && !requester.is_admin) {
    return PermissionDenied("process id " + std::to_string(id) + " belongs to another user");
  }
  it->second->touch();
  return it->second;
}

void ProcessStore::remove(int id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  auto session = std::move(it->second);
  sessions_.erase(it);
  reserved_.erase(id);
  session->release();
}

std::vector<std::shared_ptr<Session>> ProcessStore::list(const Requester& requester, bool all_users) const {
  std::vector<std::shared_ptr<Session>> out;
  for (const auto& [id, s] : sessions_) {
    bool mine = s->metadata().owner_uid == requester.uid;
    if (mine || (all_users && requester.is_admin)) out.push_back(s);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a->last_used() > b->last_used(); });
  return out;
}

std::vector<std::shared_ptr<Session>> ProcessStore::take_all() {
  std::vector<std::shared_ptr<Session>> out;
  for (auto& [id, s] : sessions_) out.push_back(std::move(s));
  sessions_.clear();
  reserved_.clear();
  return out;
}

std::string ProcessStore::session_count_warning() const {
  if (sessions_.size() < limits_.warning_threshold) return {};
  return "The maximum number of unified exec processes you can keep open is " +
         std::to_string(limits_.warning_threshold) + " and you currently have " + std::to_string(sessions_.size()) +
         " processes open. Reuse older processes or close them to prevent automatic pruning of old processes";
}

}  // namespace codexd::exec
