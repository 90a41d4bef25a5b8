// Exec.RunCommand, Codex's classic shell_command (§2): stdout and stderr apart, the timeout
// kills the group and reports 124, a caller that goes away gets its command SIGTERMed, then
// SIGKILLed 50 ms later, and the text is Codex's "Exit code / Wall time / Output".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <future>

#include "tests/integration/daemon_fixture.h"
#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

// Rust's Display of an f32 rounded to 0.1 s: "0", "0.3", "12".
std::string codex_tenths(double seconds) {
  float value = static_cast<float>(std::round(seconds * 10.0) / 10.0);
  char buf[32];
  std::snprintf(buf, sizeof buf, std::floor(value) == value ? "%.0f" : "%.1f", static_cast<double>(value));
  return buf;
}

std::string codex_classic_text(const v1::RunCommandResponse& r, const std::string& body) {
  return "Exit code: " + std::to_string(r.exit_code()) + "\nWall time: " + codex_tenths(r.wall_time_seconds()) +
         " seconds\nOutput:\n" + body;
}

class RunCommandTest : public UnsandboxedDaemonTest {
 protected:
  v1::RunCommandRequest request(const std::string& script, std::optional<uint32_t> timeout_ms = std::nullopt) {
    v1::RunCommandRequest r;
    r.add_argv("/bin/bash");
    r.add_argv("-c");
    r.add_argv(script);
    r.set_workdir(daemon_.workspace());
    if (timeout_ms) r.set_timeout_ms(*timeout_ms);
    return r;
  }

};

TEST_F(RunCommandTest, StdoutAndStderrAreKeptApart) {
  grpc::ClientContext context;
  v1::RunCommandResponse r;
  auto st = stub_->RunCommand(&context, request("echo out; echo err >&2; echo out2; exit 3"), &r);
  ASSERT_TRUE(st.ok()) << describe(st);
  EXPECT_EQ(r.exit_code(), 3);
  EXPECT_EQ(r.stdout(), "out\nout2\n");
  EXPECT_EQ(r.stderr(), "err\n");
  EXPECT_EQ(r.aggregated_output(), "out\nout2\nerr\n");  // stdout then stderr, not interleaved
  EXPECT_FALSE(r.timed_out());
  EXPECT_FALSE(r.has_signal());
  EXPECT_EQ(r.text(), codex_classic_text(r, "out\nout2\nerr\n"));
  EXPECT_THAT(r.text(), ::testing::MatchesRegex("Exit code: 3\nWall time: [0-9]+(\\.[0-9])? seconds\nOutput:\nout\nout2\nerr\n"));
}

TEST_F(RunCommandTest, EachStreamKeepsItsFirstMebibyte) {
  grpc::ClientContext context;
  v1::RunCommandResponse r;
  auto st = stub_->RunCommand(&context, request("head -c 3000000 /dev/zero | tr '\\0' o; head -c 5 /dev/zero | tr '\\0' e >&2"), &r);
  ASSERT_TRUE(st.ok()) << describe(st);
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_EQ(r.stdout(), std::string(1024 * 1024, 'o'));
  EXPECT_EQ(r.stderr(), "eeeee");
  // Together over the 1 MiB cap: stdout's third plus what stderr leaves unused, then stderr.
  EXPECT_EQ(r.aggregated_output(), std::string(1024 * 1024 - 5, 'o') + "eeeee");
}

TEST_F(RunCommandTest, TheTimeoutKillsTheGroupAndReports124) {
  grpc::ClientContext context;
  v1::RunCommandResponse r;
  auto st = stub_->RunCommand(&context, request("sleep 1000 & echo \"gc=$!\"; echo started; wait", 1000), &r);
  ASSERT_TRUE(st.ok()) << describe(st);
  EXPECT_TRUE(r.timed_out());
  EXPECT_EQ(r.exit_code(), 124);
  auto grandchild = find_number(r.stdout(), "gc=");
  ASSERT_TRUE(grandchild) << r.stdout();
  EXPECT_EQ(r.stdout(), "gc=" + std::to_string(*grandchild) + "\nstarted\n");
  EXPECT_EQ(r.text(), codex_classic_text(r, "command timed out after 1000 milliseconds\n" + r.stdout()));
  EXPECT_TRUE(wait_process_exit(static_cast<pid_t>(*grandchild))) << "the background sleep survived the timeout";
  EXPECT_FALSE(process_running(static_cast<pid_t>(*grandchild)));
}

TEST_F(RunCommandTest, ACallerThatGoesAwayGetsItsCommandTerminatedThenKilled) {
  Fifo ready(daemon_.workspace(), "ready");
  const std::string marker = daemon_.workspace() + "/marker";
  // bash records SIGTERM and carries on; its child ignores SIGTERM. Only SIGKILL ends them.
  auto req = request("trap 'echo term >> marker' TERM; (trap '' TERM; exec sleep 1000) & "
                     "echo \"$$ $!\" > ready; while :; do wait; done",
                     600'000);
  grpc::ClientContext context;
  v1::RunCommandResponse r;
  std::promise<grpc::Status> finished;
  stub_->async()->RunCommand(&context, &req, &r, [&](grpc::Status st) { finished.set_value(st); });
  const std::string pids = ready.read_all();
  auto shell = find_number(pids, "");
  auto child = find_number(pids.substr(pids.find(' ')), "");
  ASSERT_TRUE(shell && child) << pids;
  context.TryCancel();
  EXPECT_EQ(finished.get_future().get().error_code(), grpc::StatusCode::CANCELLED);

  EXPECT_TRUE(wait_process_exit(static_cast<pid_t>(*shell))) << "the shell survived";
  EXPECT_TRUE(wait_process_exit(static_cast<pid_t>(*child))) << "the TERM-ignoring child survived";
  EXPECT_FALSE(process_running(static_cast<pid_t>(*shell)));
  EXPECT_FALSE(process_running(static_cast<pid_t>(*child)));
  // SIGTERM came first (the trap ran once), and something the trap cannot catch came next.
  EXPECT_EQ(read_text_file(marker), "term\n");
}

}  // namespace
}  // namespace codexd::testing
