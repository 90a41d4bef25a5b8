// Sessions belong to the daemon, not to the caller: a client killed in the middle of its
// ExecCommand wait, or a call that gives up, leaves the command running for the next client.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

constexpr const char* kScript = "echo before; echo up > ready; read a < go; echo after; read b < go2; exit 5";

// Follows a session that another client started: before, after, then the exit.
void expect_session_carries_on(v1::Exec::Stub& stub, int id, const Fifo& go, const Fifo& go2) {
  // The dead caller's wait never drained the buffer: "before" is still there, at once.
  auto first = poll(stub, id, 10'000);
  ASSERT_TRUE(first.status.ok()) << describe(first.status);
  EXPECT_EQ(first.result.output(), "before\n");
  EXPECT_EQ(first.result.session_id(), id);
  EXPECT_TRUE(HasCodexText(first.result));
  go.write("x\n");
  auto after = follow_until_output(stub, first.result, "after\n");
  ASSERT_TRUE(after.status.ok()) << describe(after.status);
  EXPECT_EQ(after.output, "before\nafter\n");
  EXPECT_TRUE(after.last.has_session_id());
  go2.write("y\n");
  auto end = follow_until_exit(stub, after.last);
  ASSERT_TRUE(end.status.ok()) << describe(end.status);
  EXPECT_EQ(end.output, "after\n");  // from the last result on: nothing new before the exit
  EXPECT_EQ(end.last.exit_code(), 5);
}

TEST(SessionSurvival, AClientKilledInTheMiddleOfExecCommandLeavesTheSessionToTheNextClient) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  Fifo ready(daemon.workspace(), "ready"), go(daemon.workspace(), "go"), go2(daemon.workspace(), "go2");
  BackgroundProcess client({TestDaemon::codexctl_binary(), "--socket", daemon.socket_path(), "--json", "exec",
                            "--yield-ms", "30000", "-C", daemon.workspace(), "--", "/bin/sh", "-c", kScript});
  // The command is running, so the client is inside its 30 s ExecCommand wait.
  EXPECT_EQ(ready.read_all(), "up\n");
  client.kill_and_reap();

  auto stub = v1::Exec::NewStub(daemon.channel());
  auto sessions = list_sessions(*stub);
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_TRUE(sessions[0].running());
  EXPECT_EQ(sessions[0].agent_id(), "codexctl");
  EXPECT_THAT(sessions[0].argv(), ::testing::ElementsAre("/bin/sh", "-c", kScript));
  EXPECT_EQ(sessions[0].owner_uid(), 0u);
  expect_session_carries_on(*stub, sessions[0].session_id(), go, go2);
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

TEST(SessionSurvival, ACallThatGivesUpMidWaitLeavesTheSessionRunning) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  Fifo ready(daemon.workspace(), "ready"), go(daemon.workspace(), "go"), go2(daemon.workspace(), "go2");
  auto stub = v1::Exec::NewStub(daemon.channel());
  grpc::ClientContext context;
  v1::ExecResult result;
  std::promise<grpc::Status> finished;
  auto request = argv_request(daemon, {"/bin/sh", "-c", kScript}, 30'000);
  stub->async()->ExecCommand(&context, &request, &result, [&](grpc::Status st) { finished.set_value(st); });
  // The command runs, so the call is inside its 30 s wait; then the caller gives up.
  EXPECT_EQ(ready.read_all(), "up\n");
  context.TryCancel();
  auto st = finished.get_future().get();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::CANCELLED) << describe(st);
  auto sessions = list_sessions(*stub);
  ASSERT_EQ(sessions.size(), 1u);
  expect_session_carries_on(*stub, sessions[0].session_id(), go, go2);
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

TEST(SessionSurvival, AnAbandonedPollDoesNotTakeTheOutputWithIt) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  Fifo go(daemon.workspace(), "go");
  auto stub = v1::Exec::NewStub(daemon.channel());
  auto call = exec_command(*stub, argv_request(daemon, {"/bin/sh", "-c", "read a < go; echo late; sleep 1000"}, 250));
  ASSERT_TRUE(call.status.ok() && call.result.has_session_id()) << describe(call.status);
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
    v1::PollRequest request;
    request.set_session_id(call.result.session_id());
    request.set_yield_time_ms(300'000);
    v1::ExecResult result;
    EXPECT_EQ(stub->Poll(&context, request, &result).error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  // The client's deadline fires on its side first; output that reaches the daemon before the
  // cancellation does still belongs to that call (and is lost with it). So: once the daemon has
  // let go of the call (no event tells us, hence the bounded look), new output must wait.
  bool released = false;
  for (int i = 0; i < 1000 && !released; ++i) {
    auto sessions = list_sessions(*stub);
    ASSERT_EQ(sessions.size(), 1u);
    released = sessions[0].waiting_calls() == 0;
    if (!released) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(released) << "the daemon still counts the abandoned Poll as waiting after 5 s";
  go.write("x\n");
  auto late = follow_until_output(*stub, call.result, "late\n");
  ASSERT_TRUE(late.status.ok()) << describe(late.status);
  EXPECT_EQ(late.output, "late\n");
  EXPECT_TRUE(late.last.has_session_id());
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

}  // namespace
}  // namespace codexd::testing
