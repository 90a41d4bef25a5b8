// A sandboxed TTY session gets a terminal of its own inside the sandbox (the helper opens a PTY
// in bwrap's fresh /dev/pts and hands its master to the session's shim), as `docker exec -t`
// does: `tty` names /dev/pts/N there, the requested size, resizes and Ctrl-C reach the command,
// and the terminal is still the session's after the daemon restarts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>

#include "tests/integration/exec_client.h"

namespace codexd::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

// A daemon with the default sandbox; skipped (with why) where the sandbox is not bwrap: only
// bwrap gives the command a /dev of its own (Landlock shows the host's /dev/pts/N as it is).
class SandboxTerminalTest : public ::testing::Test {
 protected:
  SandboxTerminalTest() = default;
  explicit SandboxTerminalTest(TestDaemonOptions options) : daemon_(std::move(options)) {}

  void SetUp() override {
    ASSERT_TRUE(daemon_.started()) << daemon_.daemon_log();
    stub_ = v1::Exec::NewStub(daemon_.channel());
    auto probe = exec_command(*stub_, argv_request(daemon_, {"true"}));
    ASSERT_TRUE(probe.status.ok()) << describe(probe.status);
    if (probe.result.sandbox() != v1::SANDBOX_LINUX_BWRAP) {
      GTEST_SKIP() << "the sandbox here is not bwrap (" << v1::SandboxBackend_Name(probe.result.sandbox())
                   << ": " << probe.result.rejection().message() << "); only bwrap makes the terminal inside";
    }
  }

  v1::ExecCommandRequest tty_request(const std::string& script, uint32_t yield_ms = 10'000) {
    auto req = shell_request(daemon_, script, yield_ms);
    req.set_tty(true);
    return req;
  }

  // Runs `script` to its end on a terminal of rows x cols; its whole output.
  std::string run_on_terminal(const std::string& script, uint32_t rows, uint32_t cols) {
    auto req = tty_request(script);
    req.set_rows(rows);
    req.set_cols(cols);
    auto call = exec_command(*stub_, req);
    EXPECT_TRUE(call.status.ok()) << describe(call.status);
    EXPECT_EQ(call.result.exit_code(), 0) << call.result.output();
    return call.result.output();
  }

  TestDaemon daemon_;
  std::unique_ptr<v1::Exec::Stub> stub_;
};

TEST_F(SandboxTerminalTest, TheCommandsTerminalIsAPtyOfTheSandboxWithTheRequestedSize) {
  const std::string output = run_on_terminal("tty; stty size; ls -l /proc/self/fd/0 | sed 's/.*-> //'", 33, 101);
  // Not /dev/console (the host terminal bound there by bwrap): a PTY of the sandbox's devpts.
  EXPECT_THAT(output, MatchesRegex("/dev/pts/[0-9]+\r\n33 101\r\n/dev/pts/[0-9]+\r\n"));
}

TEST_F(SandboxTerminalTest, CtrlCAndResizeReachTheCommandThroughTheSandboxsTerminal) {
  // The shell reports each SIGWINCH with the new size, then waits in `read`; ^C ends it.
  auto call = exec_command(*stub_, tty_request("trap 'stty size' WINCH; echo ready; while :; do read -r line; done", 2'000));
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  ASSERT_TRUE(call.result.has_session_id()) << call.result.DebugString();
  auto ready = follow_until_output(*stub_, call.result, "ready");
  ASSERT_TRUE(ready.status.ok()) << describe(ready.status);

  grpc::ClientContext context;
  v1::ResizeTerminalRequest resize;
  resize.set_session_id(call.result.session_id());
  resize.set_rows(41);
  resize.set_cols(133);
  v1::ResizeTerminalResponse resized;
  ASSERT_TRUE(stub_->ResizeTerminal(&context, resize, &resized).ok());
  // `read` is interrupted by the trap only when input arrives; a newline lets the trap run.
  auto nudged = write_stdin(*stub_, call.result.session_id(), "\n");
  ASSERT_TRUE(nudged.status.ok()) << describe(nudged.status);
  auto sized = follow_until_output(*stub_, nudged.result, "41 133");
  ASSERT_TRUE(sized.status.ok()) << describe(sized.status);
  EXPECT_THAT(sized.output, HasSubstr("41 133"));

  auto interrupted = write_stdin(*stub_, call.result.session_id(), "\x03");
  ASSERT_TRUE(interrupted.status.ok()) << describe(interrupted.status);
  auto end = follow_until_exit(*stub_, interrupted.result);
  ASSERT_TRUE(end.status.ok()) << describe(end.status);
  EXPECT_EQ(end.last.exit_code(), 130) << end.output;
}

TEST_F(SandboxTerminalTest, TheTerminalIsStillTheSessionsAfterTheDaemonRestarts) {
  auto call = exec_command(*stub_, tty_request("tty; exec cat", 2'000));
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  ASSERT_TRUE(call.result.has_session_id()) << call.result.DebugString();
  const int id = call.result.session_id();
  auto named = follow_until_output(*stub_, call.result, "/dev/pts/");
  ASSERT_TRUE(named.status.ok()) << describe(named.status);

  stub_.reset();
  ASSERT_EQ(daemon_.stop_with(SIGUSR1), 0);  // the sessions stay with their shims
  ASSERT_TRUE(daemon_.restart()) << daemon_.daemon_log();
  stub_ = v1::Exec::NewStub(daemon_.channel());

  auto written = write_stdin(*stub_, id, "after the restart\n");
  ASSERT_TRUE(written.status.ok()) << describe(written.status);
  const std::string both = "after the restart\r\nafter the restart\r\n";
  auto echoed = follow(*stub_, written.result, [&](const std::string& out) { return out.find(both) != std::string::npos; });
  ASSERT_TRUE(echoed.status.ok()) << describe(echoed.status);
  EXPECT_THAT(echoed.output, HasSubstr(both));
  ASSERT_TRUE(cancel(*stub_, id, v1::CancelRequest::KILL).ok());
}

// Without durable sessions the daemon holds the PTY itself and takes no console: the helper
// finds nobody at the other end and the command keeps the host terminal (bwrap binds it on
// /dev/console). It still works as a terminal.
class SandboxTerminalWithoutShimTest : public SandboxTerminalTest {
 protected:
  SandboxTerminalWithoutShimTest() : SandboxTerminalTest(without_shims()) {}
  static TestDaemonOptions without_shims() {
    TestDaemonOptions options;
    options.extra_config = "[exec]\ndurable_sessions = false\n";
    return options;
  }
};

TEST_F(SandboxTerminalWithoutShimTest, TheCommandKeepsTheHostTerminal) {
  EXPECT_EQ(run_on_terminal("tty; stty size", 30, 90), "/dev/console\r\n30 90\r\n");
}

}  // namespace
}  // namespace codexd::testing
