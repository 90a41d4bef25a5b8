#include "daemon/exec/process_store.h"

#include <gtest/gtest.h>

#include <set>

#include "daemon/exec/pruning.h"

namespace codexd::exec {
namespace {

using std::chrono::seconds;

std::vector<PruneCandidate> ten_entries(std::set<int> exited) {
  // Codex's vectors: ids 1..10, id 10 the most recently used.
  std::vector<PruneCandidate> v;
  auto base = std::chrono::steady_clock::time_point{};
  for (int id = 1; id <= 10; ++id) v.push_back({id, base + seconds(id), exited.count(id) > 0});
  return v;
}

TEST(Pruning, PrefersTheOldestExitedUnprotectedSession) {
  EXPECT_EQ(choose_session_to_prune(ten_entries({2}), 8), 2);
  EXPECT_EQ(choose_session_to_prune(ten_entries({1, 2}), 8), 1);
}

TEST(Pruning, FallsBackToTheLeastRecentlyUsed) {
  EXPECT_EQ(choose_session_to_prune(ten_entries({}), 8), 1);
}

TEST(Pruning, NeverTouchesTheEightMostRecent) {
  EXPECT_EQ(choose_session_to_prune(ten_entries({10}), 8), 1);
  EXPECT_EQ(choose_session_to_prune(ten_entries({3}), 8), 1);  // 3..10 are protected
  auto eight = ten_entries({});
  eight.resize(8);
  EXPECT_EQ(choose_session_to_prune(eight, 8), std::nullopt);
}

TEST(ProcessStore, RandomIdsInCodexRangeAndUnique) {
  ProcessStore store;
  std::set<int> seen;
  for (int i = 0; i < 2000; ++i) {
    auto id = store.reserve_id();
    ASSERT_TRUE(id.ok());
    EXPECT_GE(*id, 1000);
    EXPECT_LT(*id, 100000);
    EXPECT_TRUE(seen.insert(*id).second);
  }
}

TEST(ProcessStore, ReleasedIdsCanBeReused) {
  int next = 1000;
  ProcessStore store({}, [&next] { return next; });
  auto a = store.reserve_id();
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, 1000);
  store.release_id(1000);
  auto b = store.reserve_id();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, 1000);
}

TEST(ProcessStore, UnknownIdMessage) {
  ProcessStore store;
  auto found = store.find(4242, Requester{1000, false});
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(found.status().message(), "Unknown process id 4242");
}

// A call that reaches the store after shutdown took the sessions (CI saw a Poll arrive in that
// window and get NOT_FOUND) must hear that the daemon is going away, not that the id is unknown,
// and nothing new may be started that no one would end.
TEST(ProcessStore, AfterTakeAllEveryCallSaysTheDaemonIsShuttingDown) {
  ProcessStore store;
  EXPECT_TRUE(store.take_all().empty());
  for (const Status& st : {store.find(4242, Requester{1000, false}).status(), store.make_room(1000, "agent"),
                           store.reserve_id().status()}) {
    EXPECT_EQ(st.code(), StatusCode::kUnavailable);
    EXPECT_NE(st.message().find("shutting down"), std::string::npos) << st.message();
  }
  EXPECT_EQ(store.find_reported(4242, Requester{0, true}), nullptr);
}

}  // namespace
}  // namespace codexd::exec
