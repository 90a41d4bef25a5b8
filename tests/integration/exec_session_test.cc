// Unified exec over the real API: inline exits, sessions, Poll, the exit reported once, TTYs,
// interrupts, cancellation of whole process trees, and the Codex result text of each.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "tests/integration/daemon_fixture.h"
#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

using ::testing::HasSubstr;

class ExecSessionTest : public UnsandboxedDaemonTest {};

TEST_F(ExecSessionTest, InlineExitReportsTheCodeWithoutASessionInCodexFormat) {
  auto call = exec_command(*stub_, argv_request(daemon_, {"/bin/sh", "-c", "printf 'hello\\n'; exit 3"}));
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  const auto& r = call.result;
  EXPECT_EQ(r.exit_code(), 3);
  EXPECT_FALSE(r.has_session_id());
  EXPECT_FALSE(r.has_signal());
  EXPECT_EQ(r.output(), "hello\n");
  EXPECT_EQ(r.original_token_count(), 2u);  // ceil(6 / 4)
  EXPECT_EQ(r.output_offset(), 6u);
  EXPECT_FALSE(r.has_rejection());
  EXPECT_EQ(r.sandbox(), v1::SANDBOX_NONE);
  EXPECT_TRUE(HasCodexText(r));
  EXPECT_THAT(r.text(), ::testing::MatchesRegex("Chunk ID: [0-9a-f]{6}\nWall time: [0-9]+\\.[0-9]{4} seconds\n"
                                                "Process exited with code 3\nOriginal token count: 2\nOutput:\nhello\n"));
  // Nothing is left behind: the exit was the report.
  EXPECT_TRUE(list_sessions(*stub_).empty());
}

TEST_F(ExecSessionTest, EmptyOutputStillReportsATokenCountOfZero) {
  auto call = exec_command(*stub_, argv_request(daemon_, {"/bin/true"}));
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  EXPECT_EQ(call.result.exit_code(), 0);
  EXPECT_EQ(call.result.output(), "");
  EXPECT_TRUE(HasCodexText(call.result));
  EXPECT_THAT(call.result.text(), HasSubstr("Process exited with code 0\nOriginal token count: 0\nOutput:\n"));
  EXPECT_EQ(call.result.text().substr(call.result.text().size() - 8), "Output:\n");
}

TEST_F(ExecSessionTest, CmdRunsAsALoginShellUnlessLoginIsFalse) {
  auto login = exec_command(*stub_, shell_request(daemon_, "shopt -q login_shell && echo login || echo plain; echo \"$0\""));
  ASSERT_TRUE(login.status.ok()) << describe(login.status);
  EXPECT_EQ(login.result.output(), "login\n/bin/bash\n");
  auto req = shell_request(daemon_, "shopt -q login_shell && echo login || echo plain");
  req.set_login(false);
  auto plain = exec_command(*stub_, req);
  ASSERT_TRUE(plain.status.ok()) << describe(plain.status);
  EXPECT_EQ(plain.result.output(), "plain\n");
  EXPECT_TRUE(HasCodexText(plain.result));
}

TEST_F(ExecSessionTest, CommandsGetCodexsEnvironmentOverlayAndTheirWorkdir) {
  auto call = exec_command(*stub_, argv_request(daemon_, {"/bin/sh", "-c",
                                                          "echo \"$NO_COLOR|$TERM|$PAGER|$GIT_PAGER|$LANG|$CODEX_CI|${COLORTERM-unset}\"; pwd"}));
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  EXPECT_EQ(call.result.output(), "1|dumb|cat|cat|C.UTF-8|1|\n" + daemon_.workspace() + "\n");
}

TEST_F(ExecSessionTest, OutputIsTruncatedToMaxOutputTokensInCodexsFormat) {
  // Codex's own vector (truncate_tests.rs): Tokens(5) on this text.
  auto req = argv_request(daemon_, {"/usr/bin/printf", "%s", "this is an example of a long output that should be truncated"});
  req.set_max_output_tokens(5);
  auto call = exec_command(*stub_, req);
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  EXPECT_EQ(call.result.output(), "Total output lines: 1\n\nthis is an\u202610 tokens truncated\u2026 truncated");
  EXPECT_EQ(call.result.original_token_count(), 15u);  // ceil(60 / 4)
  EXPECT_TRUE(HasCodexText(call.result));
  // Codex's regex test for a truncated result (context_tests.rs), with our chunk id.
  EXPECT_THAT(call.result.text(),
              ::testing::MatchesRegex("Chunk ID: [0-9a-f]{6}\nWall time: [0-9]+\\.[0-9]{4} seconds\nProcess exited with code 0\n"
                                      "Original token count: 15\nOutput:\n.*tokens truncated.*"));
}

TEST_F(ExecSessionTest, LongRunningSessionPollReturnsAtFirstOutputAndTheExitIsReportedOnce) {
  Fifo first(daemon_.workspace(), "first");
  Fifo second(daemon_.workspace(), "second");
  auto call = exec_command(*stub_, argv_request(daemon_,
                                                {"/bin/sh", "-c", "read a < first; echo \"got $a\"; read b < second; echo \"bye $b\"; exit 7"},
                                                250));
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  ASSERT_TRUE(call.result.has_session_id()) << call.result.DebugString();
  const int id = call.result.session_id();
  EXPECT_FALSE(call.result.has_exit_code());
  EXPECT_EQ(call.result.output(), "");
  EXPECT_TRUE(HasCodexText(call.result));
  EXPECT_THAT(call.result.text(), HasSubstr("\nProcess running with session ID " + std::to_string(id) + "\nOriginal token count: 0\n"));

  // A Poll with the longest wait returns at the first output: the command is then blocked on
  // `second`, so nothing but that output can end the wait.
  ExecCall polled;
  std::thread poller([&] { polled = poll(*stub_, id, 300'000); });
  first.write("one\n");
  poller.join();
  ASSERT_TRUE(polled.status.ok()) << describe(polled.status);
  auto more = follow_until_output(*stub_, polled.result, "got one\n");
  ASSERT_TRUE(more.status.ok()) << describe(more.status);
  EXPECT_EQ(more.output, "got one\n");
  EXPECT_TRUE(more.last.has_session_id());
  EXPECT_EQ(more.last.session_id(), id);

  second.write("two\n");
  auto end = follow_until_exit(*stub_, more.last);
  ASSERT_TRUE(end.status.ok()) << describe(end.status);
  EXPECT_EQ(end.output, "got one\nbye two\n");
  EXPECT_EQ(end.last.exit_code(), 7);
  EXPECT_FALSE(end.last.has_session_id());
  EXPECT_THAT(end.last.text(), HasSubstr("\nProcess exited with code 7\n"));

  // Reported once; afterwards the id is unknown to every call.
  const std::string unknown = "Unknown process id " + std::to_string(id);
  auto again = poll(*stub_, id, 0);
  EXPECT_EQ(again.status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(again.status.error_message(), unknown);
  auto write = write_stdin(*stub_, id, "");
  EXPECT_EQ(write.status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(write.status.error_message(), unknown);
  auto cancelled = cancel(*stub_, id, v1::CancelRequest::KILL);
  EXPECT_EQ(cancelled.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(cancelled.error_message(), unknown);
  EXPECT_TRUE(list_sessions(*stub_).empty());
}

TEST_F(ExecSessionTest, EmptyWriteStdinIsAPollThatReportsTheExit) {
  Fifo go(daemon_.workspace(), "go");
  auto call = exec_command(*stub_, argv_request(daemon_, {"/bin/sh", "-c", "read a < go; echo done; exit 2"}, 250));
  ASSERT_TRUE(call.status.ok() && call.result.has_session_id()) << describe(call.status);
  go.write("x\n");
  // An empty write waits (at least 5 s by Codex's clamp) until the exit, which ends it early.
  auto written = write_stdin(*stub_, call.result.session_id(), "", 30'000);
  ASSERT_TRUE(written.status.ok()) << describe(written.status);
  auto end = follow_until_exit(*stub_, written.result);
  EXPECT_EQ(end.output, "done\n");
  EXPECT_EQ(end.last.exit_code(), 2);
  EXPECT_TRUE(HasCodexText(written.result));
}

TEST_F(ExecSessionTest, CatOnATtyEchoesWhatWriteStdinSent) {
  auto req = argv_request(daemon_, {"cat"}, 250);
  req.set_tty(true);
  auto call = exec_command(*stub_, req);
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  ASSERT_TRUE(call.result.has_session_id()) << call.result.DebugString();
  const int id = call.result.session_id();

  auto written = write_stdin(*stub_, id, "hello tty\n");
  ASSERT_TRUE(written.status.ok()) << describe(written.status);
  EXPECT_TRUE(HasCodexText(written.result));
  // The terminal echoes the line (ONLCR turns \n into \r\n), then cat writes it back.
  const std::string both = "hello tty\r\nhello tty\r\n";
  auto echoed = follow(*stub_, written.result, [&](const std::string& out) { return out.size() >= both.size(); });
  ASSERT_TRUE(echoed.status.ok()) << describe(echoed.status);
  EXPECT_EQ(echoed.output, both);
  EXPECT_TRUE(echoed.last.has_session_id());

  // Ctrl-C on a terminal is a byte; the line discipline makes it SIGINT for cat.
  auto interrupted = write_stdin(*stub_, id, "\x03");
  ASSERT_TRUE(interrupted.status.ok()) << describe(interrupted.status);
  auto end = follow_until_exit(*stub_, interrupted.result);
  ASSERT_TRUE(end.status.ok()) << describe(end.status);
  EXPECT_EQ(end.last.exit_code(), 130);
  EXPECT_EQ(end.last.signal(), 2);
  EXPECT_EQ(end.output, "^C");
}

TEST_F(ExecSessionTest, TtySessionsHaveTheRequestedSizeAndDefaultTo24x80) {
  auto req = argv_request(daemon_, {"stty", "size"});
  req.set_tty(true);
  auto plain = exec_command(*stub_, req);
  ASSERT_TRUE(plain.status.ok()) << describe(plain.status);
  EXPECT_EQ(plain.result.output(), "24 80\r\n");
  EXPECT_EQ(plain.result.exit_code(), 0);
  req.set_rows(33);
  req.set_cols(101);
  auto sized = exec_command(*stub_, req);
  ASSERT_TRUE(sized.status.ok()) << describe(sized.status);
  EXPECT_EQ(sized.result.output(), "33 101\r\n");
}

TEST_F(ExecSessionTest, WritingToAPipeSessionIsRefusedBecauseStdinIsClosed) {
  auto call = exec_command(*stub_, argv_request(daemon_, {"sleep", "1000"}, 250));
  ASSERT_TRUE(call.status.ok() && call.result.has_session_id()) << describe(call.status);
  auto written = write_stdin(*stub_, call.result.session_id(), "abc");
  EXPECT_EQ(written.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(written.status.error_message(),
            "stdin is closed for this session; rerun exec_command with tty=true to keep stdin open");
  // Still alive and usable.
  EXPECT_TRUE(poll(*stub_, call.result.session_id(), 0).result.has_session_id());
}

// bash runs the INT trap once its foreground `sleep` (same group, so also interrupted) is gone.
constexpr const char* kTrapInt = "trap 'echo got-int; exit 42' INT; echo ready; while :; do sleep 1; done";

TEST_F(ExecSessionTest, ALoneCtrlCOnAPipeSessionInterruptsItsProcessGroup) {
  auto call = exec_command(*stub_, argv_request(daemon_, {"/bin/bash", "-c", kTrapInt}, 250));
  ASSERT_TRUE(call.status.ok() && call.result.has_session_id()) << describe(call.status);
  auto ready = follow_until_output(*stub_, call.result, "ready\n");
  ASSERT_EQ(ready.output, "ready\n");
  auto written = write_stdin(*stub_, call.result.session_id(), "\x03");
  ASSERT_TRUE(written.status.ok()) << describe(written.status);
  auto end = follow_until_exit(*stub_, written.result);
  ASSERT_TRUE(end.status.ok()) << describe(end.status);
  EXPECT_EQ(end.output, "got-int\n");
  EXPECT_EQ(end.last.exit_code(), 42);
}

TEST_F(ExecSessionTest, CancelInterruptSendsSigintToTheProcessGroup) {
  auto call = exec_command(*stub_, argv_request(daemon_, {"/bin/bash", "-c", kTrapInt}, 250));
  ASSERT_TRUE(call.status.ok() && call.result.has_session_id()) << describe(call.status);
  auto ready = follow_until_output(*stub_, call.result, "ready\n");
  ASSERT_EQ(ready.output, "ready\n");
  bool was_running = false;
  auto st = cancel(*stub_, call.result.session_id(), v1::CancelRequest::INTERRUPT, std::nullopt, &was_running);
  ASSERT_TRUE(st.ok()) << describe(st);
  EXPECT_TRUE(was_running);
  auto end = follow_until_exit(*stub_, ready.last);
  EXPECT_EQ(end.output, "ready\ngot-int\n");
  EXPECT_EQ(end.last.exit_code(), 42);
}

TEST_F(ExecSessionTest, CancelTerminateKillsTheWholeTreeIncludingAGrandchildThatIgnoresSigterm) {
  // The subshell and its `sleep` ignore SIGTERM: only the SIGKILL after the grace ends them.
  const char* script =
      "( trap '' TERM; sleep 1000 & echo \"gc=$!\"; wait ) & echo \"child=$!\"; wait";
  auto call = exec_command(*stub_, argv_request(daemon_, {"/bin/bash", "-c", script}, 250));
  ASSERT_TRUE(call.status.ok() && call.result.has_session_id()) << describe(call.status);
  const int id = call.result.session_id();
  auto started = follow(*stub_, call.result, [](const std::string& out) {
    return out.find("gc=") != std::string::npos && out.find("child=") != std::string::npos &&
           std::count(out.begin(), out.end(), '\n') == 2;
  });
  auto grandchild = find_number(started.output, "gc=");
  auto child = find_number(started.output, "child=");
  ASSERT_TRUE(grandchild && child) << started.output;
  ASSERT_TRUE(process_running(static_cast<pid_t>(*grandchild)));
  auto sessions = list_sessions(*stub_);
  ASSERT_EQ(sessions.size(), 1u);
  const pid_t leader = sessions[0].pid();

  bool was_running = false;
  auto st = cancel(*stub_, id, v1::CancelRequest::TERMINATE, 200, &was_running);
  ASSERT_TRUE(st.ok()) << describe(st);
  EXPECT_TRUE(was_running);
  auto end = follow_until_exit(*stub_, started.last);
  ASSERT_TRUE(end.status.ok()) << describe(end.status);
  EXPECT_EQ(end.last.exit_code(), 143);  // bash itself died of SIGTERM
  EXPECT_EQ(end.last.signal(), 15);
  EXPECT_TRUE(HasCodexText(end.last));

  for (pid_t pid : {leader, static_cast<pid_t>(*child), static_cast<pid_t>(*grandchild)}) {
    EXPECT_TRUE(wait_process_exit(pid)) << "pid " << pid << " survived";
    EXPECT_FALSE(process_running(pid)) << "pid " << pid << " state " << process_state(pid);
  }
}

TEST_F(ExecSessionTest, CancelKillReportsSignalNine) {
  auto call = exec_command(*stub_, argv_request(daemon_, {"sleep", "1000"}, 250));
  ASSERT_TRUE(call.status.ok() && call.result.has_session_id()) << describe(call.status);
  ASSERT_TRUE(cancel(*stub_, call.result.session_id(), v1::CancelRequest::KILL).ok());
  auto end = follow_until_exit(*stub_, call.result);
  EXPECT_EQ(end.last.exit_code(), 137);
  EXPECT_EQ(end.last.signal(), 9);
  bool was_running = true;
  // Once reported, the session is gone.
  EXPECT_EQ(cancel(*stub_, call.result.session_id(), v1::CancelRequest::KILL, std::nullopt, &was_running).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(ExecSessionTest, ChildrenInheritNoDescriptorsBeyondStdio) {
  // `ls` itself holds the directory it lists open as 3.
  auto pipe = exec_command(*stub_, argv_request(daemon_, {"ls", "-1", "/proc/self/fd"}));
  ASSERT_TRUE(pipe.status.ok()) << describe(pipe.status);
  EXPECT_EQ(pipe.result.output(), "0\n1\n2\n3\n");
  auto tty_req = argv_request(daemon_, {"ls", "-1", "/proc/self/fd"});
  tty_req.set_tty(true);
  auto tty = exec_command(*stub_, tty_req);
  ASSERT_TRUE(tty.status.ok()) << describe(tty.status);
  EXPECT_EQ(tty.result.output(), "0\r\n1\r\n2\r\n3\r\n");
  v1::RunCommandRequest run;
  run.add_argv("ls");
  run.add_argv("-1");
  run.add_argv("/proc/self/fd");
  run.set_workdir(daemon_.workspace());
  v1::RunCommandResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(stub_->RunCommand(&context, run, &response).ok());
  EXPECT_EQ(response.stdout(), "0\n1\n2\n3\n");
  EXPECT_EQ(response.stderr(), "");
}

TEST(SandboxedExec, ChildrenInheritNoDescriptorsBeyondStdioUnderTheDefaultSandbox) {
  TestDaemon daemon;  // sandbox mode "workspace-write": the default backend launches the command
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto stub = v1::Exec::NewStub(daemon.channel());
  auto call = exec_command(*stub, argv_request(daemon, {"ls", "-1", "/proc/self/fd"}));
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  if (call.result.rejection().reason() == v1::Rejection::SANDBOX_UNAVAILABLE) {
    GTEST_SKIP() << "no sandbox backend here: " << call.result.rejection().message();
  }
  EXPECT_NE(call.result.sandbox(), v1::SANDBOX_NONE);
  EXPECT_EQ(call.result.output(), "0\n1\n2\n3\n");
  EXPECT_EQ(call.result.exit_code(), 0);
  EXPECT_TRUE(HasCodexText(call.result));
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

// Every answer about a session names its sandbox, as ListSessions does: Poll and WriteStdin
// once said SANDBOX_NONE for a bwrap session.
TEST(SandboxedExec, PollAndWriteStdinReportTheSandboxThatListSessionsReports) {
  TestDaemon daemon;  // workspace-write: sandboxed
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto stub = v1::Exec::NewStub(daemon.channel());
  auto request = argv_request(daemon, {"/bin/cat"}, 0);
  request.set_tty(true);  // stdin stays open: WriteStdin takes bytes
  auto started = exec_command(*stub, request);
  ASSERT_TRUE(started.status.ok()) << describe(started.status);
  if (started.result.rejection().reason() == v1::Rejection::SANDBOX_UNAVAILABLE) {
    GTEST_SKIP() << "no sandbox backend here: " << started.result.rejection().message();
  }
  ASSERT_TRUE(started.result.has_session_id()) << started.result.text();
  const auto listed = list_sessions(*stub);
  ASSERT_EQ(listed.size(), 1u);
  ASSERT_NE(listed[0].sandbox(), v1::SANDBOX_NONE);
  EXPECT_EQ(started.result.sandbox(), listed[0].sandbox());
  auto polled = poll(*stub, started.result.session_id(), 0);
  ASSERT_TRUE(polled.status.ok()) << describe(polled.status);
  EXPECT_EQ(polled.result.sandbox(), listed[0].sandbox()) << "Poll";
  auto written = write_stdin(*stub, started.result.session_id(), "x\n", 0);
  ASSERT_TRUE(written.status.ok()) << describe(written.status);
  EXPECT_EQ(written.result.sandbox(), listed[0].sandbox()) << "WriteStdin";
  ASSERT_TRUE(cancel(*stub, started.result.session_id(), v1::CancelRequest::KILL).ok());
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

}  // namespace
}  // namespace codexd::testing
