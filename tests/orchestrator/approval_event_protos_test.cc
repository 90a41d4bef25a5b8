// Reviewer streams share one message per pending approval (daemon/server/approval_event_protos.h):
// a large command is converted once, not once per stream, and nothing is kept once no stream
// holds it.
#include "daemon/server/approval_event_protos.h"

#include <gtest/gtest.h>

namespace codexd::server {
namespace {

orchestrator::ApprovalTicket ticket(const std::string& id) {
  orchestrator::ApprovalTicket t;
  t.id = id;
  t.argv = {"mkdir", std::string(100'000, 'a')};
  return t;
}

TEST(ApprovalEventProtos, StreamsHoldingTheSameApprovalShareOneMessage) {
  ApprovalEventProtos protos;
  const auto a = ticket("apr_000000000000000a");
  const orchestrator::ApprovalEvent added{orchestrator::ApprovalEvent::Kind::kAdded, &a, {}, {}};
  auto first = protos.message_for(added);
  auto second = protos.message_for(added);
  EXPECT_EQ(first.get(), second.get());
  ASSERT_TRUE(first->has_added());
  EXPECT_EQ(first->added().approval_id(), "apr_000000000000000a");
  EXPECT_EQ(first->added().argv(1).size(), 100'000u);
  // Another approval has its own.
  const auto b = ticket("apr_000000000000000b");
  EXPECT_NE(protos.message_for({orchestrator::ApprovalEvent::Kind::kAdded, &b, {}, {}}).get(), first.get());
}

TEST(ApprovalEventProtos, NothingIsKeptOnceNoStreamHoldsIt) {
  ApprovalEventProtos protos;
  const auto a = ticket("apr_000000000000000a");
  const orchestrator::ApprovalEvent added{orchestrator::ApprovalEvent::Kind::kAdded, &a, {}, {}};
  std::weak_ptr<const v1::ApprovalEvent> gone = protos.message_for(added);
  EXPECT_TRUE(gone.expired()) << "the cache holds the message itself";
  EXPECT_NE(protos.message_for(added), nullptr) << "made again when asked again";
}

TEST(ApprovalEventProtos, ResolvedAndSyncedEventsAreTheirOwn) {
  ApprovalEventProtos protos;
  orchestrator::ApprovalEvent resolved{orchestrator::ApprovalEvent::Kind::kResolved, nullptr, "apr_000000000000000a", {}};
  auto message = protos.message_for(resolved);
  ASSERT_TRUE(message->has_resolved());
  EXPECT_EQ(message->resolved().approval_id(), "apr_000000000000000a");
  EXPECT_TRUE(protos.message_for({orchestrator::ApprovalEvent::Kind::kSynced, nullptr, {}, {}})->has_synced());
}

}  // namespace
}  // namespace codexd::server
