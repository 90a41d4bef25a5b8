#include "daemon/orchestrator/approval_broker.h"

#include <algorithm>
#include <cstdio>

namespace codexd::orchestrator {

namespace {
constexpr size_t kRememberResolved = 4096;
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

std::string ApprovalBroker::request(ApprovalTicket ticket, Done done) {
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

  Pending pending{std::move(ticket), std::move(done), nullptr};
  if (options_.timeout.count() > 0) {
    pending.timer = std::make_unique<boost::asio::steady_timer>(io_, options_.timeout);
    pending.timer->async_wait([this, id](const boost::system::error_code& ec) {
      if (ec) return;
      ApprovalOutcome outcome;
      outcome.kind = ApprovalOutcome::Kind::kTimedOut;
      finish(id, outcome);
    });
  }
  auto [it, inserted] = pending_.emplace(id, std::move(pending));
  ApprovalEvent added{ApprovalEvent::Kind::kAdded, it->second.ticket, {}, {}};
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
                               const std::string& rationale) {
  auto it = pending_.find(id);
  if (it == pending_.end()) {
    if (resolved_.count(id)) return FailedPrecondition("approval " + id + " was already resolved");
    return NotFound("no pending approval " + id);
  }
  if (!reviewers_->may_review(reviewer_uid, it->second.ticket)) {
    return PermissionDenied("uid " + std::to_string(reviewer_uid) + " may not review approval " + id);
  }
  ApprovalOutcome outcome;
  outcome.kind = ApprovalOutcome::Kind::kDecided;
  outcome.decision = decision;
  outcome.resolved_by = reviewer_uid;
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
  resolved_[id] = pending.ticket.requester_uid;
  resolved_order_.push_back(id);
  if (resolved_order_.size() > kRememberResolved) {
    resolved_.erase(resolved_order_.front());
    resolved_order_.pop_front();
  }
  ApprovalEvent resolved{ApprovalEvent::Kind::kResolved, {}, id, outcome};
  for (auto& [wid, w] : std::map<WatcherId, Watcher>(watchers_)) {
    if (reviewers_->may_review(w.uid, pending.ticket)) w.on_event(resolved);
  }
  if (pending.done) pending.done(outcome);
}

ApprovalBroker::WatcherId ApprovalBroker::watch(uid_t reviewer_uid, std::function<void(const ApprovalEvent&)> on_event) {
  WatcherId id = next_watcher_++;
  for (const auto& ticket : pending_for(reviewer_uid)) on_event({ApprovalEvent::Kind::kAdded, ticket, {}, {}});
  on_event({ApprovalEvent::Kind::kSynced, {}, {}, {}});
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

void ApprovalBroker::shutdown() {
  std::vector<std::string> ids;
  for (const auto& [id, p] : pending_) ids.push_back(id);
  ApprovalOutcome outcome;
  outcome.kind = ApprovalOutcome::Kind::kShutdown;
  outcome.decision = ReviewDecision::kAbort;
  for (const auto& id : ids) finish(id, outcome);
  watchers_.clear();
}

}  // namespace codexd::orchestrator
