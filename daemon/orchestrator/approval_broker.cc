#include "daemon/orchestrator/approval_broker.h"

#include <algorithm>
#include <cstdio>
#include <spdlog/spdlog.h>

namespace codexd::orchestrator {

namespace {
constexpr size_t kRememberResolved = 4096;

// The saved approvals: command approvals only (a network approval's connection never
// outlives the daemon).
bool saveable(const ApprovalTicket& ticket) { return !ticket.network.has_value() && !ticket.nested.has_value(); }

// A repeat of the same request by the same requester. Strict on purpose: an approval is
// never handed to another uid, agent id or call.
bool same_request(const ApprovalTicket& saved, const ApprovalTicket& asked) {
  return !asked.call_id.empty() && saved.requester_uid == asked.requester_uid && saved.agent_id == asked.agent_id &&
         saved.call_id == asked.call_id && saved.argv == asked.argv && saved.cmd == asked.cmd &&
         saved.workdir == asked.workdir && saved.attempt == asked.attempt && saveable(asked);
}
}

const char* review_decision_name(ReviewDecision decision) {
  switch (decision) {
    case ReviewDecision::kApproved: return "approved";
    case ReviewDecision::kApprovedForSession: return "approved_for_session";
    case ReviewDecision::kDenied: return "denied";
    case ReviewDecision::kAbort: return "abort";
    case ReviewDecision::kApprovedWithAmendment: return "approved_execpolicy_amendment";
  }
  return "unknown";
}

const char* outcome_source_name(ApprovalOutcome::Kind kind) {
  switch (kind) {
    case ApprovalOutcome::Kind::kDecided: return "reviewer";
    case ApprovalOutcome::Kind::kTimedOut: return "timeout";
    case ApprovalOutcome::Kind::kNoReviewer: return "no_reviewer";
    case ApprovalOutcome::Kind::kRequesterGone: return "requester_disconnected";
    case ApprovalOutcome::Kind::kShutdown: return "shutdown";
  }
  return "unknown";
}

ApprovalBroker::ApprovalBroker(boost::asio::io_context& io, BrokerOptions options,
                               std::shared_ptr<const ReviewerPolicy> reviewers)
    : io_(io), options_(options), reviewers_(std::move(reviewers)), rng_(std::random_device{}()) {}

std::string ApprovalBroker::new_id() {
  for (;;) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "apr_%016llx", static_cast<unsigned long long>(rng_()));
    if (!pending_.count(buf) && !resolved_.count(buf)) return buf;
  }
}

bool ApprovalBroker::anyone_may_review(const ApprovalTicket& ticket) const {
  for (const auto& [id, w] : watchers_) {
    if (reviewers_->may_review(w.uid, ticket)) return true;
  }
  return false;
}

void ApprovalBroker::start_timer(const std::string& id, Pending& pending, std::chrono::steady_clock::duration after) {
  pending.timer = std::make_unique<boost::asio::steady_timer>(io_, after);
  pending.timer->async_wait([this, id](const boost::system::error_code& ec) {
    if (ec) return;
    ApprovalOutcome outcome;
    outcome.kind = ApprovalOutcome::Kind::kTimedOut;
    finish(id, outcome);
  });
}

void ApprovalBroker::remember_resolved(const std::string& id, uid_t uid) {
  resolved_[id] = uid;
  resolved_order_.push_back(id);
  if (resolved_order_.size() > kRememberResolved) {
    resolved_.erase(resolved_order_.front());
    resolved_order_.pop_front();
  }
}

bool ApprovalBroker::prune_unclaimed() {
  const auto now = std::chrono::system_clock::now();
  bool pruned = false;
  for (auto it = unclaimed_.begin(); it != unclaimed_.end();) {
    if (now - it->second.resolved_at >= kClaimWindow) {
      it = unclaimed_.erase(it);
      pruned = true;
    } else {
      ++it;
    }
  }
  return pruned;
}

void ApprovalBroker::persist() {
  if (!store_ || stopping_) return;
  std::vector<StoredApprovalRef> saved;
  for (const auto& [id, p] : pending_) {
    if (saveable(p.ticket)) saved.push_back(StoredApprovalRef{&p.ticket, std::nullopt, std::nullopt});
  }
  for (const auto& [id, u] : unclaimed_) saved.push_back(StoredApprovalRef{&u.ticket, u.outcome, u.resolved_at});
  store_->set_approval_refs(saved);
}

ApprovalBroker::Restored ApprovalBroker::restore(std::vector<StoredApproval> approvals) {
  Restored restored;
  const auto now = std::chrono::system_clock::now();
  for (auto& a : approvals) {
    const std::string id = a.ticket.id;
    if (id.empty() || pending_.count(id) || unclaimed_.count(id) || !saveable(a.ticket)) continue;
    if (a.outcome) {
      remember_resolved(id, a.ticket.requester_uid);
      unclaimed_.emplace(id, Unclaimed{std::move(a.ticket), *a.outcome, a.resolved_at.value_or(now)});
      ++restored.resolved;
      continue;
    }
    if (a.ticket.expires_at && *a.ticket.expires_at <= now) {
      ApprovalOutcome outcome;
      outcome.kind = ApprovalOutcome::Kind::kTimedOut;
      remember_resolved(id, a.ticket.requester_uid);
      unclaimed_.emplace(id, Unclaimed{std::move(a.ticket), outcome, now});
      ++restored.resolved;
      ++restored.timed_out;
      continue;
    }
    auto [it, inserted] = pending_.emplace(id, Pending{std::move(a.ticket), nullptr, nullptr, true});
    if (it->second.ticket.expires_at) {
      start_timer(id, it->second,
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(*it->second.ticket.expires_at - now));
    }
    ++restored.pending;
  }
  prune_unclaimed();
  persist();
  return restored;
}

Status ApprovalBroker::has_room(const ApprovalTicket& ticket) const {
  size_t mine = 0;
  for (const auto& [id, p] : pending_) {
    if (p.restored && !p.done && same_request(p.ticket, ticket)) return Status::Ok();
    if (p.ticket.requester_uid == ticket.requester_uid) ++mine;
  }
  for (const auto& [id, u] : unclaimed_) {
    if (same_request(u.ticket, ticket)) return Status::Ok();
  }
  if (mine >= options_.max_pending_per_uid) {
    return ResourceExhausted("uid " + std::to_string(ticket.requester_uid) + " already has " + std::to_string(mine) +
                             " approval requests pending; the limit is " + std::to_string(options_.max_pending_per_uid) +
                             " per uid (approvals.max_pending_per_uid): wait for a reviewer's answers");
  }
  if (pending_.size() >= options_.max_pending) {
    return ResourceExhausted(std::to_string(pending_.size()) + " approval requests are pending; the limit is " +
                             std::to_string(options_.max_pending) +
                             " in all (approvals.max_pending): wait for a reviewer's answers");
  }
  return Status::Ok();
}

std::string ApprovalBroker::request(ApprovalTicket ticket, Done done) {
  if (prune_unclaimed()) persist();
  // A requester asking again after a restart: its restored approval, still pending or decided.
  for (auto& [pid, p] : pending_) {
    if (p.restored && !p.done && same_request(p.ticket, ticket)) {
      p.done = std::move(done);
      spdlog::info("approval {} (restored) claimed by its requester's repeated request; waiting for a reviewer", pid);
      return pid;
    }
  }
  for (auto it = unclaimed_.begin(); it != unclaimed_.end(); ++it) {
    if (!same_request(it->second.ticket, ticket)) continue;
    const std::string id = it->first;
    const ApprovalOutcome outcome = it->second.outcome;
    unclaimed_.erase(it);
    persist();
    spdlog::info("approval {} (restored) claimed by its requester's repeated request; already resolved ({})", id,
                 outcome_source_name(outcome.kind));
    done(outcome);
    return id;
  }

  ticket.id = new_id();
  ticket.created_at = std::chrono::system_clock::now();
  if (options_.timeout.count() > 0) ticket.expires_at = ticket.created_at + options_.timeout;
  const std::string id = ticket.id;

  if (options_.reject_without_reviewer && !anyone_may_review(ticket)) {
    ApprovalOutcome outcome;
    outcome.kind = ApprovalOutcome::Kind::kNoReviewer;
    done(outcome);
    return id;
  }

  Pending pending{std::move(ticket), std::move(done), nullptr, false};
  if (options_.timeout.count() > 0) start_timer(id, pending, options_.timeout);
  auto [it, inserted] = pending_.emplace(id, std::move(pending));
  if (saveable(it->second.ticket)) persist();
  ApprovalEvent added{ApprovalEvent::Kind::kAdded, &it->second.ticket, {}, {}};
  for (auto& [wid, w] : std::map<WatcherId, Watcher>(watchers_)) {
    if (reviewers_->may_review(w.uid, it->second.ticket)) w.on_event(added);
  }
  return id;
}

void ApprovalBroker::abandon(const std::string& id) {
  ApprovalOutcome outcome;
  outcome.kind = ApprovalOutcome::Kind::kRequesterGone;
  outcome.decision = ReviewDecision::kAbort;
  finish(id, outcome);
}

Status ApprovalBroker::resolve(const std::string& id, ReviewDecision decision, uid_t reviewer_uid,
                               const std::string& rationale, const std::string& reviewer_agent) {
  auto it = pending_.find(id);
  if (it == pending_.end()) {
    // Only those who may review it learn that it was resolved; to anyone else it never existed.
    // (What is kept of a resolved request is its requester, all that may_review reads.)
    auto done = resolved_.find(id);
    ApprovalTicket requester;
    if (done != resolved_.end()) requester.requester_uid = done->second;
    if (done != resolved_.end() && reviewers_->may_review(reviewer_uid, requester)) {
      return FailedPrecondition("approval " + id + " was already resolved");
    }
    return NotFound("no pending approval " + id);
  }
  // The same answer as for an id that does not exist: a uid that may not review a request
  // cannot tell that it is pending (as sessions answer another uid).
  if (!reviewers_->may_review(reviewer_uid, it->second.ticket)) return NotFound("no pending approval " + id);
  ApprovalOutcome outcome;
  outcome.kind = ApprovalOutcome::Kind::kDecided;
  outcome.decision = decision;
  outcome.resolved_by = reviewer_uid;
  outcome.resolved_by_agent = reviewer_agent;
  outcome.rationale = rationale;
  finish(id, outcome);
  return Status::Ok();
}

void ApprovalBroker::finish(const std::string& id, const ApprovalOutcome& outcome) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  Pending pending = std::move(it->second);
  pending_.erase(it);
  if (pending.timer) pending.timer->cancel();
  ++resolved_counts_[{outcome_source_name(outcome.kind), review_decision_name(outcome.decision)}];
  remember_resolved(id, pending.ticket.requester_uid);
  // A restored approval resolved while its requester is away waits for it to ask again.
  if (pending.restored && !pending.done && outcome.kind != ApprovalOutcome::Kind::kShutdown) {
    unclaimed_.emplace(id, Unclaimed{pending.ticket, outcome, std::chrono::system_clock::now()});
  }
  if (saveable(pending.ticket)) persist();
  ApprovalEvent resolved{ApprovalEvent::Kind::kResolved, nullptr, id, outcome};
  for (auto& [wid, w] : std::map<WatcherId, Watcher>(watchers_)) {
    if (reviewers_->may_review(w.uid, pending.ticket)) w.on_event(resolved);
  }
  if (pending.done) pending.done(outcome);
}

ApprovalBroker::WatcherId ApprovalBroker::watch(uid_t reviewer_uid, std::function<void(const ApprovalEvent&)> on_event) {
  WatcherId id = next_watcher_++;
  for (const ApprovalTicket* ticket : pending_refs_for(reviewer_uid)) on_event({ApprovalEvent::Kind::kAdded, ticket, {}, {}});
  on_event({ApprovalEvent::Kind::kSynced, nullptr, {}, {}});
  watchers_.emplace(id, Watcher{reviewer_uid, std::move(on_event)});
  return id;
}

void ApprovalBroker::unwatch(WatcherId id) { watchers_.erase(id); }

std::vector<ApprovalTicket> ApprovalBroker::pending_for(uid_t reviewer_uid) const {
  std::vector<ApprovalTicket> out;
  for (const auto& [id, p] : pending_) {
    if (reviewers_->may_review(reviewer_uid, p.ticket)) out.push_back(p.ticket);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.created_at < b.created_at; });
  return out;
}

std::vector<const ApprovalTicket*> ApprovalBroker::pending_refs_for(uid_t reviewer_uid) const {
  std::vector<const ApprovalTicket*> out;
  for (const auto& [id, p] : pending_) {
    if (reviewers_->may_review(reviewer_uid, p.ticket)) out.push_back(&p.ticket);
  }
  std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) {
    return a->created_at != b->created_at ? a->created_at < b->created_at : a->id < b->id;
  });
  return out;
}

void ApprovalBroker::shutdown() {
  // What is pending stays saved: the next daemon restores it. Ending the waits below is
  // this daemon's business only.
  stopping_ = true;
  if (store_) store_->freeze();
  std::vector<std::string> ids;
  for (const auto& [id, p] : pending_) ids.push_back(id);
  ApprovalOutcome outcome;
  outcome.kind = ApprovalOutcome::Kind::kShutdown;
  outcome.decision = ReviewDecision::kAbort;
  for (const auto& id : ids) finish(id, outcome);
  watchers_.clear();
}

}  // namespace codexd::orchestrator
