#include "daemon/exec/one_shot.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/exec/io_test_util.h"
#include "tests/exec/launch_test_util.h"
#include "tests/support/temp_dir.h"

namespace codexd::exec {
namespace {

using ::testing::HasSubstr;
using testing_util::run_until;

LaunchSpec shell(const std::string& script) { return testing_util::shell_launch(script); }

class OneShotTest : public ::testing::Test {
 protected:
  Result<OneShotOutcome> run(const std::string& script, uint32_t timeout_ms, std::shared_ptr<OneShotRun>* handle = nullptr) {
    std::optional<Result<OneShotOutcome>> got;
    auto started = OneShotRun::start(io, shell(script), {}, timeout_ms, [&](Result<OneShotOutcome> r) { got = std::move(r); });
    EXPECT_TRUE(started.ok());
    if (handle) *handle = *started;
    EXPECT_TRUE(run_until(io, [&] { return got.has_value(); }));
    return std::move(*got);
  }
  boost::asio::io_context io;
};

TEST_F(OneShotTest, KeepsStdoutAndStderrApart) {
  auto r = run("echo out; echo err >&2; exit 5", 10000);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 5);
  EXPECT_EQ(r->stdout_bytes, "out\n");
  EXPECT_EQ(r->stderr_bytes, "err\n");
  EXPECT_EQ(r->aggregated, "out\nerr\n");
  EXPECT_FALSE(r->timed_out);
}

TEST_F(OneShotTest, TimeoutKillsTheGroupAndReports124) {
  auto r = run("echo before; sleep 30; echo after", 300);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->exit_code, kTimeoutExitCode);
  EXPECT_EQ(r->stdout_bytes, "before\n");
  EXPECT_LT(r->wall_time_seconds, 10.0);
  EXPECT_THAT(one_shot_content(*r), ::testing::StartsWith("command timed out after 300 milliseconds\nbefore\n"));
}

TEST_F(OneShotTest, CancelSendsTermThenKill) {
  // A FIFO tells the test when the TERM trap is installed (opening it blocks until both ends meet).
  codexd::testing::TempDir dir("codexd-oneshot");
  std::string fifo = dir.sub("ready");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::optional<Result<OneShotOutcome>> got;
  auto started = OneShotRun::start(io, shell("trap '' TERM; echo ready > " + fifo + "; sleep 30"), {}, 60000,
                                   [&](Result<OneShotOutcome> r) { got = std::move(r); });
  ASSERT_TRUE(started.ok());
  {
    std::ifstream ready(fifo);
    std::string line;
    std::getline(ready, line);
    ASSERT_EQ(line, "ready");
  }
  (*started)->cancel();
  ASSERT_TRUE(run_until(io, [&] { return got.has_value(); }));
  ASSERT_TRUE(got->ok());
  EXPECT_TRUE((*got)->cancelled);
  EXPECT_EQ((*got)->exit_code, 1);
  EXPECT_EQ((*got)->signal, SIGKILL);  // TERM was ignored: the 50 ms grace ended in SIGKILL
}

TEST(Aggregate, CodexOneThirdRule) {
  EXPECT_EQ(aggregate_output("ab", "cd", 10), "abcd");
  // Both big: stdout gets a third (3), stderr the rest (7).
  EXPECT_EQ(aggregate_output(std::string(20, 'o'), std::string(20, 'e'), 10), std::string(3, 'o') + std::string(7, 'e'));
  // stderr small: stdout takes back what stderr leaves unused.
  EXPECT_EQ(aggregate_output(std::string(20, 'o'), "ee", 10), std::string(8, 'o') + "ee");
}

}  // namespace
}  // namespace codexd::exec
