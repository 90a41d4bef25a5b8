#include "platform/limits/limits.h"

#include <sys/resource.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "platform/limits/rlimit_manager.h"

namespace codexd::limits {
namespace {

TEST(Classify, ALimitHitDecidesOverThePlainExit) {
  EXPECT_EQ(classify(LimitHit::kOutOfMemory, 0, false), Termination::kOutOfMemory);
  EXPECT_EQ(classify(LimitHit::kOutOfMemory, 137, true), Termination::kOutOfMemory);
  EXPECT_EQ(classify(LimitHit::kProcessLimit, 1, false), Termination::kProcessLimit);
  // It hit the limit once but carried on and succeeded: just exited.
  EXPECT_EQ(classify(LimitHit::kProcessLimit, 0, false), Termination::kExited);
  EXPECT_EQ(classify(LimitHit::kNone, 143, true), Termination::kSignalled);
  EXPECT_EQ(classify(LimitHit::kNone, 2, false), Termination::kExited);
}

TEST(TerminationNote, NamesTheLimit) {
  ResourceLimits l;
  l.memory_max = 256ull << 20;
  l.pids_max = 64;
  EXPECT_EQ(termination_note(Termination::kOutOfMemory, l), "killed: memory limit 256 MiB reached");
  EXPECT_EQ(termination_note(Termination::kProcessLimit, l), "stopped: process limit 64 reached (fork failed)");
  EXPECT_EQ(termination_note(Termination::kExited, l), "");
  EXPECT_EQ(format_bytes(3ull << 29), "1.5 GiB");
  EXPECT_EQ(format_bytes(512), "512 B");
}

TEST(Tighter, TakesTheSmallerOfEachMaximumAndTheSessionsWeight) {
  ResourceLimits session, agent;
  session.pids_max = 100;
  session.cpu_weight = 50;
  agent.pids_max = 80;
  agent.memory_max = 1 << 30;
  agent.cpu_weight = 400;
  ResourceLimits both = tighter(session, agent);
  EXPECT_EQ(both.pids_max, 80u);
  EXPECT_EQ(both.memory_max, 1u << 30);
  EXPECT_EQ(both.cpu_weight, 50u);
  EXPECT_FALSE(both.cpu_max_percent);
}

TEST(Rlimits, MapPidsMemoryAndCpuSeconds) {
  ResourceLimits l;
  l.pids_max = 64;
  l.memory_max = 256ull << 20;
  l.memory_swap_max = 0;
  l.cpu_seconds = 10;
  auto rl = rlimits_for(l);
  ASSERT_EQ(rl.size(), 3u);
  EXPECT_EQ(rl[0].resource, RLIMIT_NPROC);
  EXPECT_EQ(rl[0].soft, 64u);
  EXPECT_EQ(rl[1].resource, RLIMIT_AS);
  EXPECT_EQ(rl[1].hard, 256ull << 20);
  EXPECT_EQ(rl[2].resource, RLIMIT_CPU);
  EXPECT_EQ(rl[2].soft, 10u);
}

TEST(RlimitManager, WarnsAndPutsTheLimitsIntoTheSpawn) {
  auto manager = create_rlimit_manager("test");
  EXPECT_EQ(manager->status().mechanism, Mechanism::kRlimit);
  ASSERT_EQ(manager->status().warnings.size(), 1u);
  GroupRequest request;
  request.session.pids_max = 10;
  request.agent_budget.pids_max = 5;
  auto group = manager->create(request);
  ASSERT_TRUE(group.ok());
  posix::SpawnRequest spawn;
  (*group)->prepare(spawn);
  ASSERT_EQ(spawn.rlimits.size(), 1u);
  EXPECT_EQ(spawn.rlimits[0].soft, 5u);  // no agent level exists: the tighter one
  EXPECT_TRUE(spawn.join_fds.empty());
}

}  // namespace
}  // namespace codexd::limits
