// Layout discovery on the machines codexd meets, fed as /proc text.
#include "platform/linux/cgroup_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "platform/linux/cgroup_limits.h"
#include "platform/linux/cgroup_tree.h"

namespace codexd::limits::cgroups {
namespace {

const char* kHybridMounts =
    "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n"
    "cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0\n"
    "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
    "cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0\n"
    "cgroup /sys/fs/cgroup/freezer cgroup rw,relatime,freezer 0 0\n"
    "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
const char* kHybridSelf = "8:pids:/\n6:freezer:/\n4:memory:/box/1\n2:cpuacct:/\n1:cpu:/\n0::/\n";

auto controllers(std::string list) {
  return [list](const std::string&) { return list; };
}
bool always(const std::string&) { return true; }

TEST(CgroupLayout, HybridUsesV2ForMembershipAndV1ForControllers) {
  auto layout = discover_layout(kHybridMounts, kHybridSelf, controllers("hugetlb"), always);
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  ASSERT_EQ(layout->v2, 0);
  EXPECT_EQ(layout->hierarchies[0].own_dir, "/sys/fs/cgroup/unified");
  EXPECT_TRUE(layout->has_kill);
  EXPECT_TRUE(layout->hierarchies[0].controllers.empty());
  ASSERT_GE(layout->memory, 1);
  EXPECT_EQ(layout->hierarchies[layout->memory].own_dir, "/sys/fs/cgroup/memory/box/1");
  EXPECT_FALSE(layout->hierarchies[layout->pids].v2);
  EXPECT_FALSE(layout->hierarchies[layout->cpu].v2);
  EXPECT_EQ(layout->cpuacct, 0);  // v2's cpu.stat needs no controller
  EXPECT_THAT(describe(*layout), ::testing::HasSubstr("cgroup v2 at /sys/fs/cgroup/unified"));
}

TEST(CgroupLayout, PureV2TakesEveryControllerFromV2) {
  auto layout = discover_layout("cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n", "0::/user.slice/codexd.service\n",
                                controllers("cpuset cpu io memory pids"), always);
  ASSERT_TRUE(layout.ok());
  ASSERT_EQ(layout->hierarchies.size(), 1u);
  EXPECT_EQ(layout->hierarchies[0].own_dir, "/sys/fs/cgroup/user.slice/codexd.service");
  EXPECT_EQ(layout->memory, 0);
  EXPECT_EQ(layout->pids, 0);
  EXPECT_EQ(layout->cpu, 0);
  EXPECT_EQ(layout->io, 0);
  EXPECT_EQ(layout->freezer, -1);
}

TEST(CgroupLayout, V1OnlyHasNoKillFileButAFreezer) {
  auto layout = discover_layout(
      "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\ncgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n"
      "cgroup /sys/fs/cgroup/freezer cgroup rw,freezer 0 0\n",
      "3:freezer:/\n2:memory:/\n1:cpu,cpuacct:/a\n", controllers(""), always);
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout->v2, -1);
  EXPECT_FALSE(layout->has_kill);
  EXPECT_EQ(layout->cpu, layout->cpuacct);  // one co-mounted hierarchy
  EXPECT_EQ(layout->hierarchies[layout->cpu].own_dir, "/sys/fs/cgroup/cpu,cpuacct/a");
  EXPECT_GE(layout->freezer, 0);
  EXPECT_EQ(layout->pids, -1);
}

TEST(CgroupLayout, NoCgroupAtAllIsAnError) {
  auto layout = discover_layout("proc /proc proc rw 0 0\n", "", controllers(""), always);
  EXPECT_FALSE(layout.ok());
}

TEST(CgroupNames, EscapeKeepsOnePlainComponent) {
  EXPECT_EQ(escape_component("codex-1_a"), "codex-1_a");
  EXPECT_EQ(escape_component("../x"), "%2E%2E%2Fx");
  EXPECT_EQ(escape_component("memory.max"), "memory%2Emax");
  EXPECT_EQ(escape_component(""), "_");
}

TEST(CgroupLimits, WeightMapsToSharesLikeSystemd) {
  EXPECT_EQ(shares_for_weight(100), 1024u);
  EXPECT_EQ(shares_for_weight(400), 4096u);
  EXPECT_EQ(shares_for_weight(1), 10u);
  EXPECT_EQ(shares_for_weight(10000), 102400u);
}

}  // namespace
}  // namespace codexd::limits::cgroups
