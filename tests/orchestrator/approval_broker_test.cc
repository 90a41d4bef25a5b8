// ApprovalBroker on a real io_context: who answers, when, and what reviewers see.
#include "daemon/orchestrator/approval_broker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "tests/orchestrator/orchestrator_test_util.h"

namespace codexd::orchestrator {
namespace {

using testing_util::run_until;
using ::testing::ElementsAre;

constexpr uid_t kRequester = 1000;
constexpr uid_t kOtherUser = 1001;
constexpr uid_t kReviewer = 2000;

// The requester reviews its own requests; kReviewer reviews everybody's.
class TestReviewers : public ReviewerPolicy {
 public:
  bool may_review(uid_t reviewer, const ApprovalTicket& ticket) const override {
    return reviewer == ticket.requester_uid || reviewer == kReviewer;
  }
};

struct Recorder {
  std::vector<ApprovalOutcome> outcomes;
  ApprovalBroker::Done done() {
    return [this](const ApprovalOutcome& o) { outcomes.push_back(o); };
  }
};

// One line per event, easy to compare: "added apr_x", "synced", "resolved apr_x reviewer approved".
struct EventLog {
  std::vector<std::string> lines;
  std::function<void(const ApprovalEvent&)> sink() {
    return [this](const ApprovalEvent& e) {
      switch (e.kind) {
        case ApprovalEvent::Kind::kAdded: lines.push_back("added " + e.ticket->id); break;
        case ApprovalEvent::Kind::kSynced: lines.push_back("synced"); break;
        case ApprovalEvent::Kind::kResolved:
          lines.push_back("resolved " + e.approval_id + " " + outcome_source_name(e.outcome.kind) + " " +
                          review_decision_name(e.outcome.decision));
          break;
      }
    };
  }
};

ApprovalTicket ticket_from(uid_t uid, const std::string& agent = "agent-a") {
  ApprovalTicket t;
  t.requester_uid = uid;
  t.agent_id = agent;
  t.argv = {"touch", "x"};
  t.workdir = "/w";
  return t;
}

class BrokerTest : public ::testing::Test {
 protected:
  void make(BrokerOptions options = {}) {
    broker = std::make_unique<ApprovalBroker>(io, options, std::make_shared<TestReviewers>());
  }
  void SetUp() override { make(); }

  boost::asio::io_context io;
  std::unique_ptr<ApprovalBroker> broker;
};

TEST_F(BrokerTest, FirstAnswerWinsAndLaterAnswersAreFailedPrecondition) {
  Recorder r;
  const std::string id = broker->request(ticket_from(kRequester), r.done());
  EXPECT_THAT(id, ::testing::StartsWith("apr_"));
  EXPECT_EQ(broker->pending_count(), 1u);
  EXPECT_TRUE(r.outcomes.empty()) << "nothing is decided before someone answers";

  ASSERT_TRUE(broker->resolve(id, ReviewDecision::kApproved, kReviewer, "ok").ok());
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].kind, ApprovalOutcome::Kind::kDecided);
  EXPECT_EQ(r.outcomes[0].decision, ReviewDecision::kApproved);
  ASSERT_TRUE(r.outcomes[0].resolved_by.has_value());
  EXPECT_EQ(*r.outcomes[0].resolved_by, kReviewer);
  EXPECT_EQ(r.outcomes[0].rationale, "ok");
  EXPECT_EQ(broker->pending_count(), 0u);

  // A second reviewer (even with a different answer) loses, and the requester is not called again.
  Status late = broker->resolve(id, ReviewDecision::kDenied, kRequester, "");
  EXPECT_EQ(late.code(), StatusCode::kFailedPrecondition) << late.message();
  EXPECT_EQ(broker->resolve(id, ReviewDecision::kApproved, kReviewer, "").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.outcomes.size(), 1u);
  // A uid that may not review it cannot tell it from an id that never existed.
  Status foreign = broker->resolve(id, ReviewDecision::kApproved, kOtherUser, "");
  EXPECT_EQ(foreign.code(), StatusCode::kNotFound) << foreign.message();
  EXPECT_EQ(foreign.message(), "no pending approval " + id);
}

TEST_F(BrokerTest, UnknownIdIsNotFound) {
  EXPECT_EQ(broker->resolve("apr_0000000000000000", ReviewDecision::kApproved, kReviewer, "").code(),
            StatusCode::kNotFound);
  EXPECT_EQ(broker->resolve("", ReviewDecision::kApproved, kReviewer, "").code(), StatusCode::kNotFound);
}

TEST_F(BrokerTest, OnlyPermittedReviewersMayAnswerAndARefusalLeavesTheRequestPending) {
  Recorder r;
  const std::string id = broker->request(ticket_from(kRequester), r.done());
  Status refused = broker->resolve(id, ReviewDecision::kApproved, kOtherUser, "");
  // Told apart from an unknown id by nothing: not the code, not the message.
  EXPECT_EQ(refused.code(), StatusCode::kNotFound) << refused.message();
  EXPECT_EQ(refused.message(), "no pending approval " + id);
  EXPECT_TRUE(r.outcomes.empty());
  EXPECT_EQ(broker->pending_count(), 1u);
  EXPECT_TRUE(broker->pending_for(kOtherUser).empty()) << "a uid that may not review does not see the request";
  ASSERT_EQ(broker->pending_for(kRequester).size(), 1u);
  ASSERT_EQ(broker->pending_for(kReviewer).size(), 1u);

  // The requester's own uid may answer (the default reviewer).
  ASSERT_TRUE(broker->resolve(id, ReviewDecision::kDenied, kRequester, "no").ok());
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].decision, ReviewDecision::kDenied);
}

TEST_F(BrokerTest, EveryDecisionReachesTheRequesterUnchanged) {
  for (auto decision : {ReviewDecision::kApproved, ReviewDecision::kApprovedForSession, ReviewDecision::kDenied,
                        ReviewDecision::kAbort}) {
    Recorder r;
    const std::string id = broker->request(ticket_from(kRequester), r.done());
    ASSERT_TRUE(broker->resolve(id, decision, kReviewer, "").ok());
    ASSERT_EQ(r.outcomes.size(), 1u);
    EXPECT_EQ(r.outcomes[0].kind, ApprovalOutcome::Kind::kDecided);
    EXPECT_EQ(r.outcomes[0].decision, decision) << review_decision_name(decision);
  }
}

TEST_F(BrokerTest, TimeoutEndsTheRequestAndTellsWatchers) {
  BrokerOptions options;
  options.timeout = std::chrono::milliseconds(20);
  make(options);
  EventLog events;
  broker->watch(kReviewer, events.sink());
  Recorder r;
  const auto before = std::chrono::system_clock::now();
  const std::string id = broker->request(ticket_from(kRequester), r.done());
  auto pending = broker->pending_for(kReviewer);
  ASSERT_EQ(pending.size(), 1u);
  ASSERT_TRUE(pending[0].expires_at.has_value());
  EXPECT_GE(*pending[0].expires_at, before + options.timeout);

  ASSERT_TRUE(run_until(io, [&] { return !r.outcomes.empty(); })) << "the timeout never fired";
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].kind, ApprovalOutcome::Kind::kTimedOut);
  EXPECT_FALSE(r.outcomes[0].resolved_by.has_value());
  EXPECT_THAT(events.lines, ElementsAre("synced", "added " + id, "resolved " + id + " timeout denied"));
  EXPECT_EQ(broker->resolve(id, ReviewDecision::kApproved, kReviewer, "").code(), StatusCode::kFailedPrecondition);
}

TEST_F(BrokerTest, AnAnswerBeforeTheTimeoutCancelsTheTimer) {
  BrokerOptions options;
  options.timeout = std::chrono::milliseconds(20);
  make(options);
  Recorder r;
  const std::string id = broker->request(ticket_from(kRequester), r.done());
  ASSERT_TRUE(broker->resolve(id, ReviewDecision::kApproved, kReviewer, "").ok());
  // Drain everything the io_context has (the cancelled timer's handler included).
  io.restart();
  io.run();
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].kind, ApprovalOutcome::Kind::kDecided);
}

TEST_F(BrokerTest, NoTimeoutMeansNoExpiry) {
  Recorder r;
  broker->request(ticket_from(kRequester), r.done());
  ASSERT_EQ(broker->pending_for(kRequester).size(), 1u);
  EXPECT_FALSE(broker->pending_for(kRequester)[0].expires_at.has_value());
  io.restart();
  io.run();  // nothing is scheduled: returns at once, the request still waits
  EXPECT_TRUE(r.outcomes.empty());
}

TEST_F(BrokerTest, RejectWithoutReviewerRejectsWhenNobodyWhoMayAnswerIsWatching) {
  BrokerOptions options;
  options.reject_without_reviewer = true;
  make(options);

  Recorder nobody;
  broker->request(ticket_from(kRequester), nobody.done());
  ASSERT_EQ(nobody.outcomes.size(), 1u);
  EXPECT_EQ(nobody.outcomes[0].kind, ApprovalOutcome::Kind::kNoReviewer);
  EXPECT_EQ(broker->pending_count(), 0u);

  // A watcher that may not review this requester's commands does not count.
  EventLog outsider;
  broker->watch(kOtherUser, outsider.sink());
  Recorder still_nobody;
  broker->request(ticket_from(kRequester), still_nobody.done());
  ASSERT_EQ(still_nobody.outcomes.size(), 1u);
  EXPECT_EQ(still_nobody.outcomes[0].kind, ApprovalOutcome::Kind::kNoReviewer);
  EXPECT_THAT(outsider.lines, ElementsAre("synced")) << "the outsider saw nothing of it";

  // With a permitted watcher, the request waits.
  EventLog reviewer;
  auto w = broker->watch(kReviewer, reviewer.sink());
  Recorder waits;
  const std::string id = broker->request(ticket_from(kRequester), waits.done());
  EXPECT_TRUE(waits.outcomes.empty());
  EXPECT_THAT(reviewer.lines, ElementsAre("synced", "added " + id));
  ASSERT_TRUE(broker->resolve(id, ReviewDecision::kApproved, kReviewer, "").ok());
  ASSERT_EQ(waits.outcomes.size(), 1u);

  // Once the reviewer stops watching, it is "no reviewer" again.
  broker->unwatch(w);
  Recorder gone;
  broker->request(ticket_from(kRequester), gone.done());
  ASSERT_EQ(gone.outcomes.size(), 1u);
  EXPECT_EQ(gone.outcomes[0].kind, ApprovalOutcome::Kind::kNoReviewer);
}

TEST_F(BrokerTest, AbandonAbortsTheRequestAndWatchersSeeRequesterDisconnected) {
  EventLog events;
  broker->watch(kReviewer, events.sink());
  Recorder r;
  const std::string id = broker->request(ticket_from(kRequester), r.done());
  broker->abandon(id);
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].kind, ApprovalOutcome::Kind::kRequesterGone);
  EXPECT_THAT(events.lines, ElementsAre("synced", "added " + id, "resolved " + id + " requester_disconnected abort"));
  EXPECT_EQ(broker->resolve(id, ReviewDecision::kApproved, kReviewer, "").code(), StatusCode::kFailedPrecondition);
  broker->abandon(id);  // twice: nothing happens
  broker->abandon("apr_unknown");
  EXPECT_EQ(r.outcomes.size(), 1u);
}

TEST_F(BrokerTest, WatchGivesThePendingSnapshotThenSyncedThenLiveEvents) {
  Recorder r1, r2, r3, other;
  const std::string a = broker->request(ticket_from(kRequester), r1.done());
  const std::string b = broker->request(ticket_from(kRequester), r2.done());
  const std::string foreign = broker->request(ticket_from(kOtherUser), other.done());

  EventLog mine;
  broker->watch(kRequester, mine.sink());
  EventLog all;
  broker->watch(kReviewer, all.sink());
  // Snapshot in arrival order, then synced; the other user's request is not shown to kRequester.
  EXPECT_THAT(mine.lines, ElementsAre("added " + a, "added " + b, "synced"));
  ASSERT_EQ(all.lines.size(), 4u);
  EXPECT_EQ(all.lines.back(), "synced");
  EXPECT_EQ(std::set<std::string>(all.lines.begin(), all.lines.end() - 1),
            (std::set<std::string>{"added " + a, "added " + b, "added " + foreign}));

  const std::string c = broker->request(ticket_from(kRequester), r3.done());
  ASSERT_TRUE(broker->resolve(a, ReviewDecision::kApprovedForSession, kReviewer, "").ok());
  ASSERT_TRUE(broker->resolve(foreign, ReviewDecision::kDenied, kOtherUser, "").ok());
  EXPECT_THAT(mine.lines, ElementsAre("added " + a, "added " + b, "synced", "added " + c,
                                      "resolved " + a + " reviewer approved_for_session"));
  EXPECT_EQ(all.lines.size(), 7u);
  EXPECT_EQ(all.lines.back(), "resolved " + foreign + " reviewer denied");

  // The snapshot carries the whole ticket.
  auto pending = broker->pending_for(kRequester);
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[0].id, b);
  EXPECT_EQ(pending[0].argv, (std::vector<std::string>{"touch", "x"}));
  EXPECT_EQ(pending[0].agent_id, "agent-a");
}

TEST_F(BrokerTest, UnwatchStopsEvents) {
  EventLog events;
  auto w = broker->watch(kReviewer, events.sink());
  broker->unwatch(w);
  Recorder r;
  broker->request(ticket_from(kRequester), r.done());
  EXPECT_THAT(events.lines, ElementsAre("synced"));
}

TEST_F(BrokerTest, AWatcherMayUnwatchItselfFromItsOwnCallback) {
  std::vector<std::string> seen;
  ApprovalBroker::WatcherId self = 0;
  self = broker->watch(kReviewer, [&](const ApprovalEvent& e) {
    if (e.kind != ApprovalEvent::Kind::kAdded) return;
    seen.push_back(e.ticket->id);
    broker->unwatch(self);
  });
  EventLog second;
  broker->watch(kReviewer, second.sink());
  Recorder r1, r2;
  const std::string a = broker->request(ticket_from(kRequester), r1.done());
  broker->request(ticket_from(kRequester), r2.done());
  EXPECT_THAT(seen, ElementsAre(a));
  EXPECT_EQ(second.lines.size(), 3u) << "the other watcher still got both";
}

TEST_F(BrokerTest, ShutdownEndsEveryWaitingRequest) {
  EventLog events;
  broker->watch(kReviewer, events.sink());
  Recorder r1, r2;
  broker->request(ticket_from(kRequester), r1.done());
  broker->request(ticket_from(kOtherUser), r2.done());
  broker->shutdown();
  ASSERT_EQ(r1.outcomes.size(), 1u);
  ASSERT_EQ(r2.outcomes.size(), 1u);
  EXPECT_EQ(r1.outcomes[0].kind, ApprovalOutcome::Kind::kShutdown);
  EXPECT_EQ(r2.outcomes[0].kind, ApprovalOutcome::Kind::kShutdown);
  EXPECT_EQ(broker->pending_count(), 0u);
}

TEST_F(BrokerTest, IdsAreUniqueAndUnguessable) {
  std::set<std::string> ids;
  std::vector<Recorder> recorders(200);
  for (auto& r : recorders) ids.insert(broker->request(ticket_from(kRequester), r.done()));
  EXPECT_EQ(ids.size(), 200u);
  for (const auto& id : ids) EXPECT_EQ(id.size(), 4u + 16u) << id;
}

TEST(ReviewNames, DecisionsAndSourcesHaveTheDocumentedNames) {
  EXPECT_STREQ(review_decision_name(ReviewDecision::kApproved), "approved");
  EXPECT_STREQ(review_decision_name(ReviewDecision::kApprovedForSession), "approved_for_session");
  EXPECT_STREQ(review_decision_name(ReviewDecision::kDenied), "denied");
  EXPECT_STREQ(review_decision_name(ReviewDecision::kAbort), "abort");
  EXPECT_STREQ(outcome_source_name(ApprovalOutcome::Kind::kDecided), "reviewer");
  EXPECT_STREQ(outcome_source_name(ApprovalOutcome::Kind::kTimedOut), "timeout");
  EXPECT_STREQ(outcome_source_name(ApprovalOutcome::Kind::kNoReviewer), "no_reviewer");
  EXPECT_STREQ(outcome_source_name(ApprovalOutcome::Kind::kRequesterGone), "requester_disconnected");
  EXPECT_STREQ(outcome_source_name(ApprovalOutcome::Kind::kShutdown), "shutdown");
}

TEST_F(BrokerTest, PendingRequestsAreCappedPerUidAndInAll) {
  BrokerOptions options;
  options.max_pending_per_uid = 2;
  options.max_pending = 3;
  make(options);
  Recorder r;
  ASSERT_TRUE(broker->has_room(ticket_from(kRequester)).ok());
  const std::string first = broker->request(ticket_from(kRequester), r.done());
  broker->request(ticket_from(kRequester), r.done());
  Status mine = broker->has_room(ticket_from(kRequester));
  EXPECT_EQ(mine.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(mine.message(), ::testing::HasSubstr("the limit is 2 per uid (approvals.max_pending_per_uid)"));
  ASSERT_TRUE(broker->has_room(ticket_from(kOtherUser)).ok()) << "another uid is not held back by this one's cap";
  broker->request(ticket_from(kOtherUser), r.done());
  Status all = broker->has_room(ticket_from(kReviewer));
  EXPECT_EQ(all.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(all.message(), ::testing::HasSubstr("the limit is 3 in all (approvals.max_pending)"));
  // An answer makes room again.
  ASSERT_TRUE(broker->resolve(first, ReviewDecision::kDenied, kRequester, "").ok());
  EXPECT_TRUE(broker->has_room(ticket_from(kRequester)).ok());
  EXPECT_TRUE(broker->has_room(ticket_from(kReviewer)).ok());
}

}  // namespace
}  // namespace codexd::orchestrator
