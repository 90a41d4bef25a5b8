// Pending approval requests and the reviewers watching them. Runs on the core io thread:
// a command waiting for approval holds a callback here, not a thread.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "daemon/orchestrator/approval_store.h"
#include "daemon/orchestrator/approval_types.h"
#include "base/status.h"

namespace codexd::orchestrator {

// Handed to watchers synchronously, on the core thread. kAdded points at the broker's own
// ticket, valid only during the callback: a watcher copies what it keeps. (A copy per event
// and watcher was a megabyte each for a large command; issue 19.)
struct ApprovalEvent {
  enum class Kind { kAdded, kResolved, kSynced };
  Kind kind = Kind::kAdded;
  const ApprovalTicket* ticket = nullptr;  // kAdded
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
  // Pending requests at once, per requester uid and in all (approvals.max_pending_per_uid,
  // approvals.max_pending): a request beyond either is refused with RESOURCE_EXHAUSTED.
  size_t max_pending_per_uid = 32;
  size_t max_pending = 256;
};

class ApprovalBroker {
 public:
  using Done = std::function<void(const ApprovalOutcome&)>;
  using WatcherId = uint64_t;

  ApprovalBroker(boost::asio::io_context& io, BrokerOptions options, std::shared_ptr<const ReviewerPolicy> reviewers);

  // How long a restored approval that was resolved while its requester was away waits for
  // the requester to ask again before it is dropped.
  static constexpr std::chrono::minutes kClaimWindow{15};

  // Where command approvals (not network ones) are saved after every change; null: nowhere.
  void set_store(ApprovalStore* store) { store_ = store; }
  // What a previous daemon saved. Each pending approval is pending again under its id (listed,
  // watched, resolvable) with no one waiting; its expiry counts from its original creation
  // (already expired: resolved as timed out now). A resolved one waits to be claimed.
  struct Restored {
    size_t pending = 0;
    size_t resolved = 0;   // resolved and unclaimed (also: expired while the daemon was down)
    size_t timed_out = 0;  // of `resolved`: expired while the daemon was down
  };
  Restored restore(std::vector<StoredApproval> approvals);

  // Registers a request; `done` is called exactly once (decision, timeout, no reviewer,
  // requester gone, shutdown). Fills ticket.id / created_at / expires_at. Returns the id.
  // A request that repeats a restored one (same uid, agent id, non-empty call id, argv, cmd,
  // workdir and attempt) claims it instead: it waits on that id (reviewers see nothing new),
  // or, when it was resolved meanwhile, `done` is called at once with that outcome.
  // Callers ask has_room() first: request() itself does not refuse.
  std::string request(ApprovalTicket ticket, Done done);
  // OK when `ticket` may be asked now: it repeats a restored approval (it claims that one), or
  // its requester and the daemon are below their caps. RESOURCE_EXHAUSTED naming the cap and
  // its config key otherwise.
  Status has_room(const ApprovalTicket& ticket) const;
  // The requester went away: the request is aborted (reviewers see it resolved).
  void abandon(const std::string& id);

  // A reviewer's answer: NOT_FOUND for unknown ids and, with the same message, for a request
  // this uid may not review (pending or resolved); FAILED_PRECONDITION when it was already
  // resolved.
  Status resolve(const std::string& id, ReviewDecision decision, uid_t reviewer_uid, const std::string& rationale,
                 const std::string& reviewer_agent = {});

  // A reviewer stream: pending requests it may review first, then kSynced, then live events.
  WatcherId watch(uid_t reviewer_uid, std::function<void(const ApprovalEvent&)> on_event);
  void unwatch(WatcherId id);

  std::vector<ApprovalTicket> pending_for(uid_t reviewer_uid) const;
  // The same, without copies: valid until the broker next changes (use at once, on the core thread).
  std::vector<const ApprovalTicket*> pending_refs_for(uid_t reviewer_uid) const;
  size_t pending_count() const { return pending_.size(); }
  // Every approval that ended, by how (outcome_source_name) and the decision (metrics).
  const std::map<std::pair<std::string, std::string>, uint64_t>& resolved_counts() const { return resolved_counts_; }
  // The last failure to save the approval state ("" when fine or not saving).
  std::string state_error() const { return store_ ? store_->last_error() : std::string(); }

  // Daemon shutdown: every waiting request ends with kShutdown.
  void shutdown();

 private:
  struct Pending {
    ApprovalTicket ticket;
    Done done;
    std::unique_ptr<boost::asio::steady_timer> timer;
    bool restored = false;  // from the saved state; claimable while `done` is unset
  };
  struct Unclaimed {
    ApprovalTicket ticket;
    ApprovalOutcome outcome;
    std::chrono::system_clock::time_point resolved_at;
  };
  struct Watcher {
    uid_t uid;
    std::function<void(const ApprovalEvent&)> on_event;
  };

  void finish(const std::string& id, const ApprovalOutcome& outcome);
  void start_timer(const std::string& id, Pending& pending, std::chrono::steady_clock::duration after);
  void remember_resolved(const std::string& id, uid_t uid);
  // Drops unclaimed outcomes older than kClaimWindow; true if any went.
  bool prune_unclaimed();
  // Hands the saveable approvals to the store.
  void persist();
  bool anyone_may_review(const ApprovalTicket& ticket) const;
  std::string new_id();

  boost::asio::io_context& io_;
  BrokerOptions options_;
  std::shared_ptr<const ReviewerPolicy> reviewers_;
  std::map<std::string, Pending> pending_;
  std::map<std::string, Unclaimed> unclaimed_;
  ApprovalStore* store_ = nullptr;
  bool stopping_ = false;
  // Recently resolved ids, so a late answer gets FAILED_PRECONDITION rather than NOT_FOUND.
  std::deque<std::string> resolved_order_;
  std::map<std::string, uid_t> resolved_;
  std::map<WatcherId, Watcher> watchers_;
  WatcherId next_watcher_ = 1;
  std::mt19937_64 rng_;
  std::map<std::pair<std::string, std::string>, uint64_t> resolved_counts_;
};

}  // namespace codexd::orchestrator
