// Session limits are per owner: one uid (or agent) filling its sessions prunes only its own,
// never another's; a daemon-wide cap refuses rather than evicts; a pruned session tells its
// owner what happened to it; another uid's session id reads exactly like a missing one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/exec/exec_engine.h"
#include "tests/exec/io_test_util.h"

namespace codexd::exec {
namespace {

using testing::HasSubstr;
using testing_util::run_until;

class OwnerLimitsTest : public ::testing::Test {
 protected:
  static StoreLimits limits() {
    StoreLimits l;
    l.max_sessions = 9;
    l.max_sessions_per_agent = 0;
    l.max_sessions_total = 24;
    l.protected_recent = 8;
    return l;
  }
  LaunchSpec sleeper() {
    LaunchSpec l;
    l.executable = "/bin/sh";
    l.argv = {"sh", "-c", "exec sleep 600"};
    l.env = {"PATH=/usr/bin:/bin"};
    l.cwd = "/";
    return l;
  }
  LaunchSpec quick_exit(int code) {
    LaunchSpec l = sleeper();
    l.argv = {"sh", "-c", "sleep 0.2; exit " + std::to_string(code)};
    return l;
  }
  // On `e` (the fixture's engine unless a test builds one with other limits).
  Result<UnifiedOutcome> exec_on(ExecEngine& e, uid_t uid, const LaunchSpec& l, const std::string& agent = "a",
                                 uint32_t yield_ms = 10) {
    SessionMetadata m;
    m.owner_uid = uid;
    m.agent_id = agent;
    std::optional<Result<UnifiedOutcome>> got;
    e.exec(m, l, Clock::now(), yield_ms, 10000, [&](Result<UnifiedOutcome> r) { got = std::move(r); });
    EXPECT_TRUE(run_until(io, [&] { return got.has_value(); }));
    return std::move(*got);
  }
  Result<UnifiedOutcome> exec(uid_t uid, const LaunchSpec& l, const std::string& agent = "a", uint32_t yield_ms = 10) {
    return exec_on(engine, uid, l, agent, yield_ms);
  }
  int start_on(ExecEngine& e, uid_t uid, const std::string& agent = "a") {
    auto r = exec_on(e, uid, sleeper(), agent);
    EXPECT_TRUE(r.ok() && r->session_id) << (r.ok() ? "exited" : r.status().to_string());
    return r.ok() && r->session_id ? *r->session_id : -1;
  }
  int start(uid_t uid, const std::string& agent = "a") { return start_on(engine, uid, agent); }
  Result<UnifiedOutcome> poll_on(ExecEngine& e, uid_t uid, int id) {
    std::optional<Result<UnifiedOutcome>> got;
    e.poll(Requester{uid, false}, id, 0, 10000, [&](Result<UnifiedOutcome> r) { got = std::move(r); });
    EXPECT_TRUE(run_until(io, [&] { return got.has_value(); }));
    return std::move(*got);
  }
  Result<UnifiedOutcome> poll(uid_t uid, int id) { return poll_on(engine, uid, id); }
  void TearDown() override { engine.kill_all(); }

  boost::asio::io_context io;
  ExecEngine engine{io, limits(), EngineOptions{}};
};

TEST_F(OwnerLimitsTest, AUserAtItsLimitPrunesOnlyItsOwnSessions) {
  const int other = start(2000);
  for (int i = 0; i < 20; ++i) start(1000);  // far past uid 1000's limit of 9
  auto still = poll(2000, other);
  ASSERT_TRUE(still.ok()) << "uid 1000's sessions evicted uid 2000's: " << still.status().to_string();
  EXPECT_EQ(still->session_id, other);
  EXPECT_LE(engine.live_sessions(), 9u + 1u);
}

TEST_F(OwnerLimitsTest, AnOwnerWhoseSessionsAreAllProtectedIsRefusedNotAnotherEvicted) {
  StoreLimits strict = limits();
  strict.max_sessions = 9;
  strict.protected_recent = 9;  // nothing of its own may go
  ExecEngine e{io, strict, EngineOptions{}};
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(exec_on(e, 1000, sleeper()).ok());
  auto refused = exec_on(e, 1000, sleeper());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(), HasSubstr("exec.max_sessions"));
  e.kill_all();
}

TEST_F(OwnerLimitsTest, TheDaemonWideCapRefusesInsteadOfEvicting) {
  std::vector<std::pair<uid_t, int>> started;
  for (uid_t uid = 3000; uid < 3003; ++uid) {
    for (int i = 0; i < 8; ++i) started.emplace_back(uid, start(uid));
  }
  ASSERT_EQ(engine.live_sessions(), 24u);
  auto refused = exec(4000, sleeper());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(), HasSubstr("exec.max_sessions_total"));
  for (const auto& [uid, id] : started) EXPECT_TRUE(poll(uid, id).ok()) << "session " << id << " of uid " << uid;
}

TEST_F(OwnerLimitsTest, APerAgentLimitPrunesWithinTheAgent) {
  StoreLimits per_agent = limits();
  per_agent.max_sessions = 64;
  per_agent.max_sessions_per_agent = 9;
  ExecEngine e{io, per_agent, EngineOptions{}};
  const int b = start_on(e, 1000, "b");
  for (int i = 0; i < 15; ++i) start_on(e, 1000, "a");
  EXPECT_TRUE(poll_on(e, 1000, b).ok()) << "agent a's sessions evicted agent b's";
  EXPECT_EQ(e.live_sessions(), 10u);
  e.kill_all();
}

TEST_F(OwnerLimitsTest, APrunedSessionTellsItsOwnerWhatHappenedAndNobodyElse) {
  // An exited, unreported session is the first to go when its owner needs room.
  auto r = exec(1000, quick_exit(5), "a", 10);
  ASSERT_TRUE(r.ok() && r->session_id);
  const int exited = *r->session_id;
  ASSERT_TRUE(run_until(io, [&] {
    auto s = engine.find(Requester{0, true}, exited);
    return s.ok() && (*s)->has_exited();
  })) << "never exited";
  for (int i = 0; i < 9; ++i) start(1000);
  auto gone = poll(1000, exited);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(gone.status().message(), HasSubstr("had exited with code 5 and was pruned"));
  auto other = poll(2000, exited);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().message(), "Unknown process id " + std::to_string(exited));
}

TEST_F(OwnerLimitsTest, AnotherUidsSessionReadsExactlyLikeAMissingOne) {
  const int mine = start(1000);
  auto theirs = poll(2000, mine);
  ASSERT_FALSE(theirs.ok());
  EXPECT_EQ(theirs.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(theirs.status().message(), "Unknown process id " + std::to_string(mine));
  EXPECT_TRUE(poll(1000, mine).ok());
}

}  // namespace
}  // namespace codexd::exec
