// Issue 19 item 6: a grandchild that left its session's process group (setsid, TERM ignored)
// of an unsandboxed (danger-full-access) session does not outlive Cancel nor a SIGTERM stop
// of the daemon, with durable sessions (each command held by a shim) and without; without
// them, nor a SIGKILL of the daemon (issue 17 item 3). Each
// command runs in its own cgroup, which is killed whole; without a usable cgroup (the rlimit
// fallback) only the process group is reached (docs/api.md "Cancel"), so these skip.
#include <gtest/gtest.h>
#include <signal.h>

#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

// "gc=<pid>" of a grandchild in a session of its own that ignores SIGTERM, then the leader waits.
constexpr const char* kOrphanTree =
    "setsid sh -c 'trap \"\" TERM; sleep 1000 & echo gc=$! > gc.pid; wait' > /dev/null 2>&1 < /dev/null & "
    "while [ ! -s gc.pid ]; do sleep 0.05; done; cat gc.pid; exec sleep 1000";

class Orphans : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    TestDaemonOptions options = unsandboxed();
    options.extra_config = std::string("[exec]\ndurable_sessions = ") + (GetParam() ? "true" : "false") + "\n";
    daemon_ = std::make_unique<TestDaemon>(options);
    ASSERT_TRUE(daemon_->started()) << daemon_->daemon_log();
    auto status = get_status(daemon_->channel());
    if (status.limits().mechanism().rfind("cgroup", 0) != 0) {
      GTEST_SKIP() << "no usable cgroup (" << status.limits().mechanism() << ": " << status.limits().reason()
                   << "): only the process group is reached";
    }
    stub_ = v1::Exec::NewStub(daemon_->channel());
  }
  // Starts the tree; its session id and the orphan-to-be's pid.
  std::pair<int, pid_t> start_tree() {
    auto started = exec_command(*stub_, shell_request(*daemon_, kOrphanTree, 250));
    EXPECT_TRUE(started.status.ok() && started.result.has_session_id()) << describe(started.status);
    auto seen = follow_until_output(*stub_, started.result, "\n");
    auto gc = find_number(started.result.output() + seen.output, "gc=");
    EXPECT_TRUE(gc.has_value()) << started.result.output() << seen.output;
    return {started.result.session_id(), gc ? static_cast<pid_t>(*gc) : -1};
  }

  std::unique_ptr<TestDaemon> daemon_;
  std::unique_ptr<v1::Exec::Stub> stub_;
};

TEST_P(Orphans, ASetsidGrandchildIgnoringTermDiesWithCancel) {
  auto [id, grandchild] = start_tree();
  ASSERT_GT(grandchild, 1);
  ASSERT_TRUE(process_running(grandchild));
  ASSERT_TRUE(cancel(*stub_, id, v1::CancelRequest::TERMINATE, 100).ok());
  EXPECT_TRUE(wait_process_exit(grandchild)) << "the setsid grandchild " << grandchild << " outlived Cancel";
  stub_.reset();
  EXPECT_EQ(daemon_->stop(), 0) << daemon_->daemon_log();
}

TEST_P(Orphans, ASetsidGrandchildIgnoringTermDiesWithASigtermStop) {
  auto [id, grandchild] = start_tree();
  ASSERT_GT(grandchild, 1);
  ASSERT_TRUE(process_running(grandchild));
  stub_.reset();
  EXPECT_EQ(daemon_->stop(), 0) << daemon_->daemon_log();  // SIGTERM, then waits for the exit
  EXPECT_TRUE(wait_process_exit(grandchild)) << "the setsid grandchild " << grandchild << " outlived the stop";
}

// Without shims a session's processes are the daemon's children: a SIGKILL of the daemon
// signals only each leader (PR_SET_PDEATHSIG, SIGTERM), so a leader ignoring SIGTERM and a
// setsid grandchild lived on; the daemon's death watch kills the sessions' whole cgroup.
// (Durable sessions are meant to survive it: DurableSessions.TenSessionsSurviveADaemonKilledWithSigkill.)
TEST_P(Orphans, ANonDurableSessionDiesWithADaemonKilledBySigkill) {
  if (GetParam()) GTEST_SKIP() << "durable sessions outlive a killed daemon by design";
  if (daemon_->daemon_log().find("a watcher kills them all") == std::string::npos) {
    GTEST_SKIP() << "no cgroup.kill here (Linux 5.14, cgroup v2): " << daemon_->daemon_log();
  }
  auto [id, grandchild] = start_tree();
  ASSERT_GT(grandchild, 1);
  auto leader = exec_command(*stub_, shell_request(*daemon_, "trap '' TERM; echo leader=$$; exec sleep 1000", 250));
  ASSERT_TRUE(leader.status.ok() && leader.result.has_session_id()) << describe(leader.status);
  auto seen = follow_until_output(*stub_, leader.result, "\n");
  auto leader_pid = find_number(leader.result.output() + seen.output, "leader=");
  ASSERT_TRUE(leader_pid.has_value()) << leader.result.output() << seen.output;
  stub_.reset();
  daemon_->stop_with(SIGKILL);
  EXPECT_TRUE(wait_process_exit(grandchild)) << "the setsid grandchild " << grandchild << " outlived the daemon";
  EXPECT_TRUE(wait_process_exit(static_cast<pid_t>(*leader_pid)))
      << "the leader " << *leader_pid << " that ignores SIGTERM outlived the daemon";
}

INSTANTIATE_TEST_SUITE_P(DurableAndNot, Orphans, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Durable" : "NotDurable"; });

}  // namespace
}  // namespace codexd::testing
