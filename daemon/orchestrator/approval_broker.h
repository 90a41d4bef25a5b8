// Pending approval requests and the reviewers watching them. Runs on the core io thread:
// a command waiting for approval holds a callback here, not a thread.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "daemon/orchestrator/approval_types.h"
#include "base/status.h"

namespace codexd::orchestrator {

struct ApprovalEvent {
  enum class Kind { kAdded, kResolved, kSynced };
  Kind kind = Kind::kAdded;
  ApprovalTicket ticket;        // kAdded
  std::string approval_id;      // kResolved
  ApprovalOutcome outcome;      // kResolved
};

// Who may answer whose requests.
class ReviewerPolicy {
 public:
  virtual ~ReviewerPolicy() = default;
  virtual bool may_review(uid_t reviewer_uid, const ApprovalTicket& ticket) const = 0;
};

struct BrokerOptions {
  std::chrono::milliseconds timeout{0};  // 0: no timeout
  bool reject_without_reviewer = false;
};

class ApprovalBroker {
 public:
  using Done = std::function<void(const ApprovalOutcome&)>;
  using WatcherId = uint64_t;

  ApprovalBroker(boost::asio::io_context& io, BrokerOptions options, std::shared_ptr<const ReviewerPolicy> reviewers);

  // Registers a request; `done` is called exactly once (decision, timeout, no reviewer,
  // requester gone, shutdown). Fills ticket.id / created_at / expires_at. Returns the id.
  std::string request(ApprovalTicket ticket, Done done);
  // The requester went away: the request is aborted (reviewers see it resolved).
  void abandon(const std::string& id);

  // A reviewer's answer: NOT_FOUND for unknown ids, FAILED_PRECONDITION when it was already
  // resolved, PERMISSION_DENIED when this uid may not review it.
  Status resolve(const std::string& id, ReviewDecision decision, uid_t reviewer_uid, const std::string& rationale);

  // A reviewer stream: pending requests it may review first, then kSynced, then live events.
  WatcherId watch(uid_t reviewer_uid, std::function<void(const ApprovalEvent&)> on_event);
  void unwatch(WatcherId id);

  std::vector<ApprovalTicket> pending_for(uid_t reviewer_uid) const;
  size_t pending_count() const { return pending_.size(); }

  // Daemon shutdown: every waiting request ends with kShutdown.
  void shutdown();

 private:
  struct Pending {
    ApprovalTicket ticket;
    Done done;
    std::unique_ptr<boost::asio::steady_timer> timer;
  };
  struct Watcher {
    uid_t uid;
    std::function<void(const ApprovalEvent&)> on_event;
  };

  void finish(const std::string& id, const ApprovalOutcome& outcome);
  bool anyone_may_review(const ApprovalTicket& ticket) const;
  std::string new_id();

  boost::asio::io_context& io_;
  BrokerOptions options_;
  std::shared_ptr<const ReviewerPolicy> reviewers_;
  std::map<std::string, Pending> pending_;
  // Recently resolved ids, so a late answer gets FAILED_PRECONDITION rather than NOT_FOUND.
  std::deque<std::string> resolved_order_;
  std::map<std::string, uid_t> resolved_;
  std::map<WatcherId, Watcher> watchers_;
  WatcherId next_watcher_ = 1;
  std::mt19937_64 rng_;
};

}  // namespace codexd::orchestrator
