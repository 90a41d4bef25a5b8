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

namespace {
// After take_all(): the sessions are ended or handed to the next daemon, so "unknown id" would
// be false (a kept session comes back) and a new one would outlive the daemon unkilled.
Status shutting_down() {
  return Unavailable("codexd is shutting down; its sessions are ended or kept for the next daemon: reconnect and retry");
}
}  // namespace

Result<int> ProcessStore::reserve_id() {
  if (closed_) return shutting_down();
  if (reserved_.size() >= static_cast<size_t>(kMaxSessionIdExclusive - kMinSessionId)) {
    return ResourceExhausted("no free session id");
  }
  std::uniform_int_distribution<int> dist(kMinSessionId, kMaxSessionIdExclusive - 1);
  for (;;) {
    int id = ids_ ? ids_() : dist(rng_);
    if (tombstones_.count(id) && !ids_) continue;  // its owner may still ask about the pruned one
    if (reserved_.insert(id).second) {
      tombstones_.erase(id);
      reported_.erase(id);  // its order entry goes when it reaches the front
      return id;
    }
  }
}

void ProcessStore::release_id(int id) { reserved_.erase(id); }

size_t ProcessStore::count_for(uid_t uid, const std::string* agent_id) const {
  size_t n = 0;
  for (const auto& [id, s] : sessions_) {
    n += s->metadata().owner_uid == uid && (!agent_id || s->metadata().agent_id == *agent_id);
  }
  return n;
}

bool ProcessStore::prune_one(const std::function<bool(const Session&)>& in_scope) {
  std::vector<PruneCandidate> candidates;
  for (const auto& [id, s] : sessions_) {
    if (in_scope(*s)) candidates.push_back({id, s->last_used(), s->has_exited()});
  }
  auto victim = choose_session_to_prune(std::move(candidates), limits_.protected_recent);
  if (!victim) return false;
  bury(*sessions_.at(*victim));
  remove(*victim);
  return true;
}

void ProcessStore::bury(const Session& session) {
  Tombstone t;
  t.owner_uid = session.metadata().owner_uid;
  if (session.exit_status()) t.exit_code = session.exit_status()->exit_code;
  tombstones_[session.id()] = t;
  tombstone_order_.push_back(session.id());
  while (tombstone_order_.size() > limits_.tombstones) {
    tombstones_.erase(tombstone_order_.front());
    tombstone_order_.pop_front();
  }
}

Status ProcessStore::make_room(uid_t uid, const std::string& agent_id) {
  if (closed_) return shutting_down();
  if (limits_.max_sessions_per_agent > 0 && count_for(uid, &agent_id) >= limits_.max_sessions_per_agent) {
    auto same_agent = [&](const Session& s) { return s.metadata().owner_uid == uid && s.metadata().agent_id == agent_id; };
    if (!prune_one(same_agent)) {
      return ResourceExhausted("agent \"" + agent_id + "\" already has " + std::to_string(limits_.max_sessions_per_agent) +
                               " recently used sessions (exec.max_sessions_per_agent); end one first");
    }
  }
  if (count_for(uid) >= limits_.max_sessions) {
    auto same_uid = [&](const Session& s) { return s.metadata().owner_uid == uid; };
    if (!prune_one(same_uid)) {
      return ResourceExhausted("uid " + std::to_string(uid) + " already has " + std::to_string(limits_.max_sessions) +
                               " recently used sessions (exec.max_sessions); end one first");
    }
  }
  if (sessions_.size() >= limits_.max_sessions_total) {
    return ResourceExhausted("codexd holds " + std::to_string(sessions_.size()) +
                             " sessions, its limit (exec.max_sessions_total); try again when some have ended");
  }
  return Status::Ok();
}

void ProcessStore::insert(std::shared_ptr<Session> session) {
  ++total_created_;
  ++created_by_[session->metadata().owner_uid];
  reserved_.insert(session->id());
  sessions_[session->id()] = std::move(session);
}

Status ProcessStore::adopt(std::shared_ptr<Session> session) {
  if (closed_) return shutting_down();
  if (reserved_.count(session->id())) return AlreadyExists("session id " + std::to_string(session->id()) + " is taken");
  insert(std::move(session));
  return Status::Ok();
}

Result<std::shared_ptr<Session>> ProcessStore::find(int id, const Requester& requester) {
  if (closed_) return shutting_down();
  auto it = sessions_.find(id);
  const bool visible = it != sessions_.end() && (it->second->metadata().owner_uid == requester.uid || requester.is_admin);
  if (visible) {
    it->second->touch();
    return it->second;
  }
  if (auto t = tombstones_.find(id); it == sessions_.end() && t != tombstones_.end() &&
                                     (t->second.owner_uid == requester.uid || requester.is_admin)) {
    return NotFound("process id " + std::to_string(id) +
                    (t->second.exit_code ? " had exited with code " + std::to_string(*t->second.exit_code) + " and"
                                         : " was still running and") +
                    " was pruned to make room for newer sessions (exec.max_sessions); its output is gone");
  }
  // Another uid's session reads exactly like a missing one.
  return NotFound("Unknown process id " + std::to_string(id));
}

uint64_t ProcessStore::total_output_bytes() const {
  uint64_t total = output_bytes_of_removed_;
  for (const auto& [id, session] : sessions_) total += session->stream_offset();
  return total;
}

void ProcessStore::remove(int id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  auto session = std::move(it->second);
  sessions_.erase(it);
  reserved_.erase(id);
  output_bytes_of_removed_ += session->stream_offset();
  session->release();
}

void ProcessStore::retire(int id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  auto session = it->second;
  remove(id);
  drop_expired_reported();
  reported_[id] = Reported{std::move(session), Clock::now() + kReportedRetention};
  reported_order_.push_back(id);
  while (reported_.size() > kMaxReported && !reported_order_.empty()) {
    reported_.erase(reported_order_.front());
    reported_order_.pop_front();
  }
}

// Oldest first: stop at the first entry still retained (entries whose id was reused or
// dropped have no map entry and go too).
void ProcessStore::drop_expired_reported() {
  const auto now = Clock::now();
  while (!reported_order_.empty()) {
    auto it = reported_.find(reported_order_.front());
    if (it != reported_.end() && it->second.expires > now) break;
    if (it != reported_.end()) reported_.erase(it);
    reported_order_.pop_front();
  }
}

std::shared_ptr<Session> ProcessStore::find_reported(int id, const Requester& requester) {
  drop_expired_reported();
  auto it = reported_.find(id);
  if (it == reported_.end()) return nullptr;
  if (it->second.session->metadata().owner_uid != requester.uid && !requester.is_admin) return nullptr;
  return it->second.session;
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
  closed_ = true;
  std::vector<std::shared_ptr<Session>> out;
  for (auto& [id, s] : sessions_) out.push_back(std::move(s));
  sessions_.clear();
  reserved_.clear();
  tombstones_.clear();
  tombstone_order_.clear();
  reported_.clear();
  reported_order_.clear();
  return out;
}

std::string ProcessStore::session_count_warning(uid_t uid) const {
  const size_t mine = count_for(uid);
  if (mine < limits_.warning_threshold) return {};
  return "The maximum number of unified exec processes you can keep open is " +
         std::to_string(limits_.warning_threshold) + " and you currently have " + std::to_string(mine) +
         " processes open. Reuse older processes or close them to prevent automatic pruning of old processes";
}

}  // namespace codexd::exec
