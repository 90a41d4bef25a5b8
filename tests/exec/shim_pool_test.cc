// Shims started ahead (ShimPool): one taken from the pool serves a session in the directory
// its spawn request names, the pool starts the next by itself, and the shims still waiting end
// and are reaped with the pool.
#include "daemon/exec/shim_pool.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "daemon/exec/shim_link.h"
#include "tests/exec/launch_test_util.h"
#include "tests/support/temp_dir.h"

namespace codexd::exec {
namespace {

// Every child of this test process, whichever of its threads started it.
std::set<pid_t> own_children() {
  std::set<pid_t> children;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(task.path() / "children");
    pid_t pid = 0;
    while (in >> pid) children.insert(pid);
  }
  return children;
}

bool is_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

TEST(ShimPool, ATakenShimServesItsSessionAndTheWaitingOnesEndWithThePool) {
  ::codexd::testing::TempDir dir{"codexd-shim-pool"};
  const ShimConfig config{CODEXD_TEST_BIN_DIR "/codexd-shim", dir.path()};
  boost::asio::io_context io;
  std::set<pid_t> waiting;
  const std::set<pid_t> before = own_children();  // earlier tests' leftovers in this process
  {
    ShimPool pool(config, 1);
    auto shim = pool.take();  // one started with the pool
    ASSERT_TRUE(shim.ok()) << shim.status().message();
    const pid_t taken = shim->pid;
    const std::string session_dir = dir.sub("7");
    ASSERT_EQ(::mkdir(session_dir.c_str(), 0700), 0);
    auto link = ShimLink::launch(io, std::move(*shim), session_dir, testing_util::shell_spawn_request("exec sleep 1000"),
                                 64 * 1024);
    ASSERT_TRUE(link.ok()) << link.status().message();
    struct stat st {};
    EXPECT_EQ(::lstat((session_dir + "/shim.sock").c_str(), &st), 0) << "the shim did not listen where the request said";

    // The pool's thread starts the next one by itself (bounded: it only guards against a hang).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (pool.waiting() < 1 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_EQ(pool.waiting(), 1u);
    for (pid_t child : own_children()) {
      if (child != taken && before.count(child) == 0) waiting.insert(child);
    }
    ASSERT_EQ(waiting.size(), 1u);
    (*link)->release();
  }
  for (pid_t pid : waiting) EXPECT_TRUE(is_gone(pid)) << "waiting shim " << pid << " outlived its pool (or was not reaped)";
}

TEST(ShimPool, APoolOfNoneStartsAShimForEachTake) {
  ::codexd::testing::TempDir dir{"codexd-shim-pool"};
  ShimPool pool({CODEXD_TEST_BIN_DIR "/codexd-shim", dir.path()}, 0);
  auto first = pool.take();
  auto second = pool.take();
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(first->pid, second->pid);
  EXPECT_EQ(pool.waiting(), 0u);
  const pid_t pid = first->pid;
  end_waiting_shim(std::move(*first));
  EXPECT_TRUE(is_gone(pid)) << "a shim told to end without a session was not reaped";
  end_waiting_shim(std::move(*second));
}

}  // namespace
}  // namespace codexd::exec
