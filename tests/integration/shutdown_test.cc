// SIGTERM to the daemon: exit 0, every session's process group killed (grandchildren too),
// the socket removed, and no zombie children left behind at any point.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <future>

#include "daemon/exec/shim_pool.h"
#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

TEST(Shutdown, SigtermKillsEverySessionRemovesTheSocketAndExitsZero) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto stub = v1::Exec::NewStub(daemon.channel());

  // Finished commands (inline exits, a reported session, one-shot runs) leave no zombies.
  for (int i = 0; i < 3; ++i) ASSERT_EQ(exec_command(*stub, argv_request(daemon, {"/bin/true"})).result.exit_code(), 0);
  {
    grpc::ClientContext context;
    v1::RunCommandRequest run;
    run.add_argv("/bin/true");
    run.set_workdir(daemon.workspace());
    v1::RunCommandResponse response;
    ASSERT_TRUE(stub->RunCommand(&context, run, &response).ok());
  }
  auto reported = exec_command(*stub, argv_request(daemon, {"/bin/sh", "-c", "sleep 0.3"}, 250));
  ASSERT_TRUE(reported.status.ok()) << describe(reported.status);
  if (reported.result.has_session_id()) {
    EXPECT_EQ(follow_until_exit(*stub, reported.result).last.exit_code(), 0);
  }

  // Live sessions: a pipe session with a grandchild that ignores SIGTERM, a TTY, a plain sleep.
  auto tree = exec_command(*stub, argv_request(daemon, {"/bin/bash", "-c",
                                                        "( trap '' TERM; sleep 1000 & echo \"gc=$!\"; wait ) & wait"},
                                               250));
  ASSERT_TRUE(tree.status.ok() && tree.result.has_session_id()) << describe(tree.status);
  auto tree_out = follow_until_output(*stub, tree.result, "\n");
  auto grandchild = find_number(tree_out.output, "gc=");
  ASSERT_TRUE(grandchild) << tree_out.output;
  auto tty_req = argv_request(daemon, {"cat"}, 250);
  tty_req.set_tty(true);
  auto tty = exec_command(*stub, tty_req);
  ASSERT_TRUE(tty.status.ok() && tty.result.has_session_id()) << describe(tty.status);
  auto sleeper = exec_command(*stub, argv_request(daemon, {"sleep", "1000"}, 250));
  ASSERT_TRUE(sleeper.status.ok() && sleeper.result.has_session_id()) << describe(sleeper.status);

  auto sessions = list_sessions(*stub);
  ASSERT_EQ(sessions.size(), 3u);
  std::vector<pid_t> leaders;
  for (const auto& s : sessions) leaders.push_back(s.pid());
  std::sort(leaders.begin(), leaders.end());

  // The daemon's children are the sessions' shims (durable sessions), whose children are the
  // live session leaders, and at most kWaitingShims shims started ahead for the next sessions
  // (no children); none of them a zombie.
  auto children = children_of(daemon.pid());
  std::vector<pid_t> grandchild_pids;
  std::vector<pid_t> waiting_shims;
  for (const auto& c : children) {
    EXPECT_NE(c.state, 'Z') << "zombie child " << c.pid;
    auto theirs = children_of(c.pid);
    if (theirs.empty()) waiting_shims.push_back(c.pid);
    for (const auto& g : theirs) {
      EXPECT_NE(g.state, 'Z') << "zombie session leader " << g.pid;
      grandchild_pids.push_back(g.pid);
    }
  }
  std::sort(grandchild_pids.begin(), grandchild_pids.end());
  EXPECT_EQ(grandchild_pids, leaders);
  EXPECT_EQ(children.size(), leaders.size() + waiting_shims.size());
  EXPECT_LE(waiting_shims.size(), exec::kWaitingShims);

  // A call waiting when the daemon stops is ended (UNAVAILABLE), not left hanging.
  grpc::ClientContext waiting_context;
  v1::PollRequest waiting_poll;
  waiting_poll.set_session_id(sleeper.result.session_id());
  waiting_poll.set_yield_time_ms(300'000);
  v1::ExecResult waiting_result;
  std::promise<grpc::Status> waiting_done;
  stub->async()->Poll(&waiting_context, &waiting_poll, &waiting_result,
                      [&](grpc::Status st) { waiting_done.set_value(st); });

  EXPECT_EQ(daemon.stop(), 0) << daemon.daemon_log();
  struct stat st {};
  EXPECT_NE(::lstat(daemon.socket_path().c_str(), &st), 0) << "socket left behind";
  auto waited = waiting_done.get_future().get();
  EXPECT_EQ(waited.error_code(), grpc::StatusCode::UNAVAILABLE) << describe(waited);

  for (pid_t pid : leaders) {
    EXPECT_TRUE(wait_process_exit(pid, std::chrono::milliseconds(0))) << "session leader " << pid << " survived";
    EXPECT_EQ(process_state(pid), 0) << "leader " << pid << " was not reaped";
  }
  for (pid_t pid : waiting_shims) {
    EXPECT_EQ(process_state(pid), 0) << "a shim waiting for a session (" << pid << ") outlived the daemon";
  }
  EXPECT_TRUE(wait_process_exit(static_cast<pid_t>(*grandchild))) << "grandchild survived the shutdown";
  EXPECT_FALSE(process_running(static_cast<pid_t>(*grandchild)));
  EXPECT_THAT(daemon.daemon_log(), ::testing::HasSubstr("codexd stopped"));
}

}  // namespace
}  // namespace codexd::testing
