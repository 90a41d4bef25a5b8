// Signals reach the command inside the sandbox, not bubblewrap (issue 19, item 3). Before,
// Cancel INTERRUPT/TERMINATE, WriteStdin "\x03" and a PTY Ctrl-C killed bwrap, whose
// --die-with-parent then SIGKILLed everything inside: traps never ran, grace_ms did nothing,
// and a sandboxed python3 REPL died on Ctrl-C. Each test here runs the real bwrap sandbox.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/integration/exec_client.h"
#include "tests/support/test_daemon.h"

namespace codexd::testing {
namespace {

using ::testing::HasSubstr;

class SandboxSignals : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.started()) << daemon_.daemon_log();
    stub_ = v1::Exec::NewStub(daemon_.channel());
  }
  void TearDown() override {
    stub_.reset();
    EXPECT_EQ(daemon_.stop(), 0) << daemon_.daemon_log();
  }
  // Starts `script` sandboxed and follows it until it printed "ready".
  v1::ExecResult start_ready(const std::string& script, bool tty = false) {
    auto request = shell_request(daemon_, script, 1000);
    request.set_tty(tty);
    auto call = exec_command(*stub_, request);
    EXPECT_TRUE(call.status.ok()) << describe(call.status);
    EXPECT_NE(call.result.sandbox(), v1::SANDBOX_NONE) << "these tests need the real sandbox";
    EXPECT_TRUE(call.result.has_session_id()) << call.result.text();
    auto ready = follow_until_output(*stub_, call.result, "ready");
    EXPECT_THAT(ready.output, HasSubstr("ready"));
    return call.result;
  }

  TestDaemon daemon_{TestDaemonOptions{}};  // workspace-write: bwrap
  std::unique_ptr<v1::Exec::Stub> stub_;
};

const char* kTrapLoop = "trap 'echo got-$SIG; exit 7' %s; echo ready; while :; do sleep 0.05; done";

std::string trap_loop(const std::string& sig) {
  char buf[256];
  std::snprintf(buf, sizeof buf, kTrapLoop, sig.c_str());
  std::string s = buf;
  return "SIG=" + sig + "; " + s;
}

TEST_F(SandboxSignals, CancelInterruptRunsTheCommandsTrap) {
  auto first = start_ready(trap_loop("INT"));
  ASSERT_TRUE(cancel(*stub_, first.session_id(), v1::CancelRequest::INTERRUPT).ok());
  auto done = follow_until_exit(*stub_, first);
  EXPECT_TRUE(done.exited) << describe(done.status);
  EXPECT_THAT(done.output, HasSubstr("got-INT"));
  EXPECT_EQ(done.last.exit_code(), 7) << "the trap's own exit code, not bwrap's death";
}

TEST_F(SandboxSignals, CancelTerminateHonoursTheGraceAndTheTrap) {
  auto first = start_ready(trap_loop("TERM"));
  ASSERT_TRUE(cancel(*stub_, first.session_id(), v1::CancelRequest::TERMINATE, 5000).ok());
  auto done = follow_until_exit(*stub_, first);
  EXPECT_TRUE(done.exited);
  EXPECT_THAT(done.output, HasSubstr("got-TERM"));
  EXPECT_EQ(done.last.exit_code(), 7);
}

TEST_F(SandboxSignals, ControlCOnAPipeSessionIsAnInterruptForTheCommand) {
  auto first = start_ready(trap_loop("INT"));
  auto written = write_stdin(*stub_, first.session_id(), "\x03", 250);
  ASSERT_TRUE(written.status.ok()) << describe(written.status);
  auto done = follow_until_exit(*stub_, first);
  EXPECT_THAT(written.result.output() + done.output, HasSubstr("got-INT"));
}

TEST_F(SandboxSignals, ACommandKilledByTheSignalReportsThatSignal) {
  auto first = start_ready("echo ready; exec sleep 600");
  ASSERT_TRUE(cancel(*stub_, first.session_id(), v1::CancelRequest::INTERRUPT).ok());
  auto done = follow_until_exit(*stub_, first);
  EXPECT_TRUE(done.exited);
  EXPECT_EQ(done.last.exit_code(), 128 + SIGINT);
}

TEST_F(SandboxSignals, APythonReplSurvivesControlCOnItsTerminal) {
  if (!std::filesystem::exists("/usr/bin/python3")) GTEST_SKIP() << "python3 is not installed";
  auto first = start_ready("python3 -q -i -c 'print(\"ready\")'", /*tty=*/true);
  auto interrupted = write_stdin(*stub_, first.session_id(), "\x03", 1000);
  ASSERT_TRUE(interrupted.status.ok()) << describe(interrupted.status);
  auto after = follow(*stub_, interrupted.result, [](const std::string& out) {
    return out.find("KeyboardInterrupt") != std::string::npos;
  });
  EXPECT_THAT(interrupted.result.output() + after.output, HasSubstr("KeyboardInterrupt"));
  EXPECT_FALSE(after.exited) << "Ctrl-C killed the sandboxed REPL";
  auto answered = write_stdin(*stub_, first.session_id(), "print(6*7)\n", 1000);
  ASSERT_TRUE(answered.status.ok()) << describe(answered.status);
  auto more = follow(*stub_, answered.result, [](const std::string& out) { return out.find("42") != std::string::npos; });
  EXPECT_THAT(answered.result.output() + more.output, HasSubstr("42"));
  ASSERT_TRUE(cancel(*stub_, first.session_id(), v1::CancelRequest::KILL).ok());
}

}  // namespace
}  // namespace codexd::testing
