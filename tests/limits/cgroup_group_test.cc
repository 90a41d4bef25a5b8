// Real cgroups on this machine: a spawned command joins its group in every hierarchy before
// it runs, its limits are in the files, a kill reaches a setsid'd grandchild, removal clears
// the directories, and a restart clears what a previous run left. Skipped where no cgroup is
// usable (the reason is printed).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "platform/linux/cgroup_files.h"
#include "platform/linux/cgroup_limits.h"
#include "platform/linux/cgroup_manager.h"
#include "platform/linux/cgroup_pool.h"
#include "platform/posix/spawn.h"
#include "base/unique_fd.h"
#include "tests/support/wait_exit.h"

namespace codexd::limits::cgroups {
namespace {

std::string read_line(int fd) {
  std::string out;
  char c;
  for (;;) {
    ssize_t n = ::read(fd, &c, 1);
    if (n == 1) {
      if (c == '\n') return out;
      out.push_back(c);
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLIN, 0};
      ::poll(&p, 1, 10000);
    } else {
      return out;
    }
  }
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// The group directory of `pid` under the tree `root` (the v2 hierarchy's, or the first one's):
// every hierarchy has the same <root>/sessions/<agent>/<leaf>.
std::string group_dir_of(pid_t pid, const std::string& root) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/cgroup");
  for (std::string line; std::getline(file, line);) {
    if (auto at = line.find("/sessions/"); at != std::string::npos) return root + line.substr(at);
  }
  return "";
}

bool gone_or_zombie(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  if (text.empty()) return true;
  return text.find(") Z ") != std::string::npos;
}

class CgroupGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CgroupOptions options;
    options.instance = "codexd-test-" + std::to_string(::getpid());
    options.daemon_oom_score_adj.reset();
    auto manager = create_cgroup_manager(options);
    if (!manager.ok()) GTEST_SKIP() << "no usable cgroup here: " << manager.status().message();
    manager_ = std::move(manager).value();
  }
  void TearDown() override {
    if (manager_) manager_->shutdown();
  }

  // `script` under sh in group (agent, name); returns the child's pid and its output pipe.
  posix::SpawnedProcess spawn_in(ResourceGroup& group, const std::string& script) {
    posix::SpawnRequest request;
    request.executable = "/bin/sh";
    request.argv = {"sh", "-c", script};
    request.cwd = "/";
    request.env = {"PATH=/usr/bin:/bin"};
    group.prepare(request);
    auto spawned = posix::spawn_process(request);
    EXPECT_TRUE(spawned.ok()) << spawned.status().message();
    group.started(spawned->pid);
    return std::move(spawned).value();
  }

  std::unique_ptr<LimitsManager> manager_;
};

TEST_F(CgroupGroupTest, TheChildIsInItsGroupWithItsLimitsBeforeItRuns) {
  GroupRequest request{"agent/one", "77", {}, {}};
  request.session.pids_max = 32;
  request.agent_budget.pids_max = 100;
  auto group = manager_->create(request);
  ASSERT_TRUE(group.ok()) << group.status().message();
  auto child = spawn_in(**group, "cat /proc/self/cgroup; echo end");
  std::string all;
  for (std::string line = read_line(child.output.get()); line != "end" && !line.empty(); line = read_line(child.output.get())) {
    all += line + "\n";
  }
  EXPECT_EQ(testing::wait_exit_code(child.pid), 0);
  // Every hierarchy codexd uses puts the child in <tree>/sessions/agent%2Fone/g<N>/command
  // (the group's part for the command; a durable session's shim goes beside it).
  EXPECT_THAT(all, ::testing::ContainsRegex("/sessions/agent%2Fone/g[0-9]+-[0-9]+/command\n"));
  EXPECT_THAT(all, ::testing::Not(::testing::HasSubstr("0::/\n")));
  // pids.max of the session and of its agent.
  bool found = false;
  for (const auto& c : manager_->status().controllers) found = found || c.rfind("pids", 0) == 0;
  if (found) {
    std::string pids_dir;
    std::istringstream lines(all);
    for (std::string line; std::getline(lines, line);) {
      if (line.find(":pids:") != std::string::npos) pids_dir = "/sys/fs/cgroup/pids" + line.substr(line.find(":pids:") + 6);
    }
    if (!pids_dir.empty()) {  // the limits are on the group, above its parts
      EXPECT_EQ(read_number(pids_dir + "/../pids.max"), 32u);
      EXPECT_EQ(read_number(pids_dir + "/../../pids.max"), 100u);
    }
  }
  ResourceUsage usage = (*group)->usage();
  EXPECT_TRUE(usage.known);
}

TEST_F(CgroupGroupTest, KillReachesASetsidGrandchildAndRemovalClearsTheDirectories) {
  auto group = manager_->create({"killer", "1", {}, {}});
  ASSERT_TRUE(group.ok()) << group.status().message();
  auto child = spawn_in(**group, "setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $!; exec sleep 300");
  const pid_t grandchild = std::stoi(read_line(child.output.get()));
  ASSERT_FALSE(gone_or_zombie(grandchild));
  const std::string leaf = group_dir_of(child.pid, manager_->status().root);
  ASSERT_TRUE((*group)->kill_all().ok());
  EXPECT_EQ(testing::wait_exit_code(child.pid), 128 + SIGKILL);
  // The grandchild is not ours to reap: wait until it is gone or a zombie of its new parent.
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, grandchild, 0)));
  if (pidfd) {
    pollfd p{pidfd.get(), POLLIN, 0};
    ::poll(&p, 1, 10000);
  }
  EXPECT_TRUE(gone_or_zombie(grandchild)) << "setsid grandchild " << grandchild << " survived the group kill";
  ASSERT_THAT(leaf, ::testing::HasSubstr("/sessions/killer/g"));
  ASSERT_TRUE(exists(leaf));
  group->reset();
  manager_->settle();  // removal happens on the pool's worker
  EXPECT_FALSE(exists(leaf));
  const std::string agent_dir = manager_->status().root + "/sessions/killer";
  manager_->shutdown();
  EXPECT_FALSE(exists(agent_dir)) << "the agent's directory (and its stock of groups) goes at shutdown";
}

TEST_F(CgroupGroupTest, ARestartClearsWhatThePreviousRunLeft) {
  auto group = manager_->create({"left", "9", {}, {}});
  ASSERT_TRUE(group.ok());
  auto child = spawn_in(**group, "exec sleep 300");
  const std::string dir = group_dir_of(child.pid, manager_->status().root);
  ASSERT_TRUE(exists(dir));
  // A second manager of the same instance: what a restarted daemon does first.
  CgroupOptions options;
  options.instance = "codexd-test-" + std::to_string(::getpid());
  options.daemon_oom_score_adj.reset();
  auto again = create_cgroup_manager(options);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(testing::wait_exit_code(child.pid), 128 + SIGKILL);
  (*again)->shutdown();
  EXPECT_FALSE(exists(dir));
}

// A durable session's keeper joins the group's shim part: counted in the group (pids.peak of
// the leaf), but out of reach of the command's signals and kills; the group's directories go
// only once the keeper has ended too.
TEST_F(CgroupGroupTest, TheKeeperSharesTheGroupButNotTheCommandsKill) {
  auto group = manager_->create({"keeper", "5", {}, {}});
  ASSERT_TRUE(group.ok()) << group.status().message();
  posix::SpawnRequest keeper_request;
  keeper_request.executable = "/bin/sleep";
  keeper_request.argv = {"sleep", "300"};
  keeper_request.cwd = "/";
  keeper_request.join_fds = (*group)->keeper_join_fds();
  ASSERT_FALSE(keeper_request.join_fds.empty());
  auto keeper = posix::spawn_process(keeper_request);
  ASSERT_TRUE(keeper.ok()) << keeper.status().message();
  auto child = spawn_in(**group, "setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $!; exec sleep 300");
  const pid_t grandchild = std::stoi(read_line(child.output.get()));
  const std::string command = group_dir_of(child.pid, manager_->status().root);
  const std::string shim = group_dir_of(keeper->pid, manager_->status().root);
  ASSERT_THAT(command, ::testing::EndsWith("/command"));
  EXPECT_EQ(shim, command.substr(0, command.size() - 8) + "/shim");
  if ((*group)->usage().peak_processes > 0) {  // pids.peak: the kernel has it
    EXPECT_GE((*group)->usage().peak_processes, 3u) << "the keeper, the command and its grandchild";
  }
  ASSERT_TRUE((*group)->signal_all(SIGTERM).ok());
  EXPECT_EQ(testing::wait_exit_code(child.pid), 128 + SIGTERM);
  ASSERT_TRUE((*group)->kill_all().ok());
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, grandchild, 0)));
  if (pidfd) {
    pollfd p{pidfd.get(), POLLIN, 0};
    ::poll(&p, 1, 10000);
  }
  EXPECT_TRUE(gone_or_zombie(grandchild)) << "the setsid grandchild survived the group kill";
  EXPECT_FALSE(gone_or_zombie(keeper->pid)) << "the command's kill took the keeper";
  const std::string leaf = command.substr(0, command.size() - 8);
  group->reset();
  manager_->settle();
  EXPECT_TRUE(exists(leaf)) << "removed while the keeper still lives in it";
  ::kill(keeper->pid, SIGKILL);
  EXPECT_EQ(testing::wait_exit_code(keeper->pid), 128 + SIGKILL);
  manager_->settle();
  EXPECT_FALSE(exists(leaf));
}

// The pool (cgroup_pool.h): after an agent's first command its next ones take a group made
// ahead of time, and each is fresh: a directory of its own, empty, nothing measured yet, and
// the limits of its request, also when those change.
TEST_F(CgroupGroupTest, EachCommandGetsAFreshGroupWithItsOwnLimitsMostFromTheStock) {
  manager_->shutdown();
  manager_.reset();
  std::vector<std::string> warnings;
  auto layout = discover_layout();
  ASSERT_TRUE(layout.ok());
  auto tree = CgroupTree::open(*layout, "codexd-pool-test-" + std::to_string(::getpid()), warnings);
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  GroupPool pool(*tree, PoolOptions{});
  ResourceLimits budget, session;
  budget.pids_max = 100;
  session.pids_max = 32;
  const int pids = (*tree)->layout().pids;
  std::vector<std::string> seen;
  for (int i = 0; i < 4; ++i) {
    auto group = pool.take("fresh", budget, session);
    ASSERT_TRUE(group.ok()) << group.status().message();
    for (const auto& dir : group->dirs) {
      EXPECT_TRUE(read_pids(dir + "/cgroup.procs").empty()) << dir;
      EXPECT_THAT(seen, ::testing::Not(::testing::Contains(dir))) << "a group is never used twice";
      seen.push_back(dir);
    }
    ResourceUsage usage = read_usage((*tree)->layout(), group->dirs);
    // Nothing of a command yet; a v1 memory hierarchy charges the group for the kernel's
    // structures of its two parts' memory cgroups (256 KiB here), nothing else.
    EXPECT_LE(usage.peak_memory_bytes, 1u << 20);
    EXPECT_EQ(usage.peak_processes, 0u);
    if (pids >= 0) {
      EXPECT_EQ(read_number(group->dirs[pids] + "/pids.max"), 32u);
    }
    pool.release("fresh", group->dirs);
    pool.settle();
  }
  EXPECT_EQ(pool.counts().made_now, 1u);
  EXPECT_EQ(pool.counts().taken_ready, 3u);
  // Other limits: the stock made with 32 is not used.
  session.pids_max = 16;
  auto other = pool.take("fresh", budget, session);
  ASSERT_TRUE(other.ok());
  if (pids >= 0) {
    EXPECT_EQ(read_number(other->dirs[pids] + "/pids.max"), 16u);
  }
  EXPECT_EQ(pool.counts().made_now, 2u);
  pool.release("fresh", other->dirs);
  pool.settle();
  for (const auto& dir : seen) EXPECT_FALSE(exists(dir)) << dir;
  pool.stop();
  (*tree)->remove_everything();
}

}  // namespace
}  // namespace codexd::limits::cgroups
