// Resource limits under the real daemon (issue 12): hostile workloads end with the right
// termination and leave the daemon and other sessions alone; a setsid'd grandchild dies with
// its session; accounting matches what the command did; the rlimit fallback says so. These
// need a usable cgroup (v2, hybrid or v1); without one they skip with the reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "codexd/v1/admin.grpc.pb.h"
#include "codexd/v1/sandbox.grpc.pb.h"
#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

constexpr const char* kPython = "/usr/bin/python3";

TestDaemonOptions limited(const std::string& limits_toml) {
  TestDaemonOptions options = unsandboxed();
  options.extra_config = limits_toml;
  return options;
}

v1::GetStatusResponse status_of(const TestDaemon& daemon) { return get_status(daemon.channel()); }

class LimitsTest : public ::testing::Test {
 protected:
  void start(const std::string& limits_toml, bool need_cgroups = true) { start_with(limited(limits_toml), need_cgroups); }
  void start_with(const TestDaemonOptions& options, bool need_cgroups = true) {
    daemon_ = std::make_unique<TestDaemon>(options);
    ASSERT_TRUE(daemon_->started()) << daemon_->daemon_log();
    stub_ = v1::Exec::NewStub(daemon_->channel());
    status_ = status_of(*daemon_);
    if (need_cgroups && status_.limits().mechanism().rfind("cgroup", 0) != 0) {
      GTEST_SKIP() << "no usable cgroup on this machine: " << status_.limits().reason();
    }
    if (::access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is needed for the workloads";
  }
  void TearDown() override {
    stub_.reset();
    if (daemon_) {
      EXPECT_EQ(daemon_->stop(), 0) << daemon_->daemon_log();
    }
  }
  ExecCall run_session(const std::string& script, uint32_t yield_ms = 30'000, const std::string& agent = "") {
    auto request = shell_request(*daemon_, script, yield_ms);
    grpc::ClientContext context;
    if (!agent.empty()) TestDaemon::label(context, agent);
    ExecCall call;
    call.status = stub_->ExecCommand(&context, request, &call.result);
    return call;
  }

  std::unique_ptr<TestDaemon> daemon_;
  std::unique_ptr<v1::Exec::Stub> stub_;
  v1::GetStatusResponse status_;
};

TEST_F(LimitsTest, StatusReportsTheMechanismAndWhy) {
  start("");
  if (IsSkipped()) return;
  EXPECT_FALSE(status_.limits().reason().empty());
  EXPECT_TRUE(status_.limits().whole_tree_kill());
  EXPECT_THAT(status_.limits().controllers(), ::testing::Contains(::testing::StartsWith("pids")));
  EXPECT_THAT(status_.limits().controllers(), ::testing::Contains(::testing::StartsWith("memory")));
}

// A fork bomb (every process forks, the main one 200 times) stops at pids_max: the command
// ends "process limit", the daemon and a session of another agent carry on.
TEST_F(LimitsTest, ForkBombStopsAtPidsMax) {
  start("[limits]\npids_max = 64\n");
  if (IsSkipped()) return;
  auto bystander = run_session("echo started; exec sleep 60", 1000, "bystander");
  ASSERT_TRUE(bystander.status.ok()) << describe(bystander.status);
  ASSERT_TRUE(bystander.result.has_session_id()) << bystander.result.text();

  const std::string bomb = std::string(kPython) +
                           " -c 'import os, sys, time\n"
                           "for i in range(200):\n"
                           "    try:\n"
                           "        pid = os.fork()\n"
                           "    except OSError:\n"
                           "        sys.exit(3)\n"
                           "    if pid == 0:\n"
                           "        try:\n"
                           "            os.fork(); os.fork()\n"
                           "        except OSError:\n"
                           "            pass\n"
                           "        time.sleep(60)\n"
                           "        os._exit(0)\n"
                           "sys.exit(0)\n'";
  auto call = run_session(bomb, 30'000, "bomber");
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  ASSERT_TRUE(call.result.has_exit_code()) << call.result.text();
  EXPECT_EQ(call.result.exit_code(), 3) << call.result.text();
  EXPECT_EQ(call.result.termination(), v1::PROCESS_LIMIT) << call.result.text();
  EXPECT_THAT(call.result.text(), ::testing::HasSubstr("stopped: process limit 64 reached"));
  EXPECT_LE(call.result.usage().peak_processes(), 64u);

  auto echo = run_session("echo still here");
  ASSERT_TRUE(echo.status.ok()) << describe(echo.status);
  EXPECT_EQ(echo.result.output(), "still here\n");
  EXPECT_EQ(echo.result.termination(), v1::EXITED);
  auto polled = poll(*stub_, bystander.result.session_id(), 0);
  ASSERT_TRUE(polled.status.ok()) << describe(polled.status);
  EXPECT_TRUE(polled.result.has_session_id()) << "the bystander session must still run";
  EXPECT_TRUE(cancel(*stub_, bystander.result.session_id(), v1::CancelRequest::KILL).ok());
}

// 4 GiB really written under a 256 MiB limit: the OOM killer ends it, the result says so.
TEST_F(LimitsTest, LargeAllocationEndsOutOfMemory) {
  start("[limits]\nmemory_max = \"256M\"\n");
  if (IsSkipped()) return;
  auto call = run_session(std::string(kPython) + " -c 'b = b\"x\" * (4 << 30)'");
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  ASSERT_TRUE(call.result.has_exit_code()) << call.result.text();
  EXPECT_EQ(call.result.termination(), v1::OUT_OF_MEMORY) << call.result.text();
  EXPECT_THAT(call.result.text(), ::testing::HasSubstr("killed: memory limit 256 MiB reached"));
  EXPECT_LE(call.result.usage().peak_memory_bytes(), 257ull << 20);
  auto echo = run_session("echo fine");
  ASSERT_TRUE(echo.status.ok()) << describe(echo.status);
  EXPECT_EQ(echo.result.output(), "fine\n");
}

// The one-shot path too, and accounting: 100 MiB written -> peak >= 100 MiB.
TEST_F(LimitsTest, AccountingMatchesWhatTheCommandDid) {
  start("");
  if (IsSkipped()) return;
  v1::RunCommandRequest request;
  request.add_argv(kPython);
  request.add_argv("-c");
  request.add_argv("b = b'x' * (100 << 20)\nimport time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass");
  request.set_workdir(daemon_->workspace());
  grpc::ClientContext context;
  v1::RunCommandResponse r;
  auto st = stub_->RunCommand(&context, request, &r);
  ASSERT_TRUE(st.ok()) << describe(st);
  EXPECT_EQ(r.exit_code(), 0) << r.text();
  EXPECT_EQ(r.termination(), v1::EXITED);
  ASSERT_TRUE(r.usage().measured());
  EXPECT_GE(r.usage().peak_memory_bytes(), 100ull << 20);
  EXPECT_GE(r.usage().cpu_user_usec() + r.usage().cpu_system_usec(), 300'000u);
  EXPECT_GE(r.usage().peak_processes(), 1u);
  // The audit line carries the same (flushed at shutdown).
  stub_.reset();
  EXPECT_EQ(daemon_->stop(), 0);
  const std::string audit = read_text_file(daemon_->audit_log_path());
  daemon_.reset();
  EXPECT_THAT(audit, ::testing::HasSubstr("\"termination\":\"exited\""));
  EXPECT_THAT(audit, ::testing::HasSubstr("\"peak_memory_bytes\":" + std::to_string(r.usage().peak_memory_bytes())));
}

// A double-forked grandchild that called setsid is outside the process group; killing the
// session kills it anyway (the whole cgroup).
TEST_F(LimitsTest, SetsidGrandchildDiesWhenTheSessionIsKilled) {
  start("");
  if (IsSkipped()) return;
  auto call = run_session(
      "(setsid sh -c 'sleep 300 & echo $! > gc.pid; wait' > /dev/null 2>&1 < /dev/null &); "
      "while [ ! -s gc.pid ]; do sleep 0.05; done; echo ready; sleep 300",
      1000);
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  ASSERT_TRUE(call.result.has_session_id()) << call.result.text();
  auto ready = follow_until_output(*stub_, call.result, "ready");
  ASSERT_THAT(ready.output, ::testing::HasSubstr("ready"));
  const pid_t grandchild = std::stoi(read_text_file(daemon_->workspace() + "/gc.pid"));
  ASSERT_TRUE(process_running(grandchild));
  ASSERT_TRUE(cancel(*stub_, call.result.session_id(), v1::CancelRequest::TERMINATE, 200).ok());
  EXPECT_TRUE(wait_process_exit(grandchild)) << "the setsid grandchild " << grandchild << " survived its session";
  auto done = poll(*stub_, call.result.session_id(), 5000);
  ASSERT_TRUE(done.status.ok()) << describe(done.status);
  ASSERT_TRUE(done.result.has_exit_code()) << done.result.text();
  EXPECT_EQ(done.result.termination(), v1::CANCELLED);
}

// Stragglers: when the main process of a pipe session exits, what it left running (also
// outside its process group) is killed (docs/sandbox.md).
TEST_F(LimitsTest, StragglersDieWhenTheMainProcessExits) {
  start("");
  if (IsSkipped()) return;
  auto call = run_session("setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $!");
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  ASSERT_TRUE(call.result.has_exit_code()) << call.result.text();
  const pid_t straggler = std::stoi(call.result.output());
  EXPECT_TRUE(wait_process_exit(straggler)) << "the straggler " << straggler << " outlived its session";
}

// A request may ask for at most its agent's budget; more is INVALID_ARGUMENT saying how much.
TEST_F(LimitsTest, RequestAboveTheAgentBudgetIsRefused) {
  start("[agents.\"small\"]\npids_max = 100\n", false);
  if (IsSkipped()) return;
  // A long yield: ExecCommand returns at the exit, and a loaded machine may take a second.
  auto request = shell_request(*daemon_, "echo hi", 30'000);
  request.mutable_limits()->set_pids_max(500);
  grpc::ClientContext context;
  TestDaemon::label(context, "small");
  v1::ExecResult result;
  auto st = stub_->ExecCommand(&context, request, &result);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), ::testing::HasSubstr("at most 100"));

  request.mutable_limits()->set_pids_max(50);
  grpc::ClientContext ok_context;
  TestDaemon::label(ok_context, "small");
  EXPECT_TRUE(stub_->ExecCommand(&ok_context, request, &result).ok());
  EXPECT_EQ(result.output(), "hi\n");
}

// `mechanism = "rlimit"`: the fallback engages, is reported with a warning, and its limits act.
TEST_F(LimitsTest, RlimitFallbackEngagesWithAWarning) {
  start("[limits]\nmechanism = \"rlimit\"\nmemory_max = \"256M\"\n", false);
  if (IsSkipped()) return;
  EXPECT_EQ(status_.limits().mechanism(), "rlimit");
  ASSERT_FALSE(status_.limits().warnings().empty());
  EXPECT_THAT(status_.limits().warnings(0), ::testing::HasSubstr("rlimits"));
  EXPECT_FALSE(status_.limits().whole_tree_kill());
  EXPECT_THAT(daemon_->daemon_log(), ::testing::HasSubstr("limits: resource limits fall back to rlimits"));
  auto call = run_session(std::string(kPython) + " -c 'b = b\"x\" * (1 << 30)'");
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  ASSERT_TRUE(call.result.has_exit_code()) << call.result.text();
  EXPECT_NE(call.result.exit_code(), 0);
  EXPECT_THAT(call.result.output(), ::testing::HasSubstr("MemoryError"));
  EXPECT_FALSE(call.result.usage().measured());
}

// Two agents with CPU weights 100 and 400 saturate both cores; the heavier one gets about four
// times the CPU. Measured as the growth of each session's accounted CPU over the same window,
// after both run, so the light one's head start and the machine's other load do not count
// (wide tolerance for a shared machine).
TEST_F(LimitsTest, CpuWeightsShareCpuInProportion) {
  start("[agents.\"light\"]\ncpu_weight = 100\n[agents.\"heavy\"]\ncpu_weight = 400\n");
  if (IsSkipped()) return;
  const std::string spin = "for i in 1 2 3 4; do (while :; do :; done) & done; wait";
  auto light = run_session(spin, 250, "light");
  auto heavy = run_session(spin, 250, "heavy");
  ASSERT_TRUE(light.status.ok() && heavy.status.ok());
  ASSERT_TRUE(light.result.has_session_id() && heavy.result.has_session_id());
  auto cpu_usec = [&](int session_id) -> uint64_t {
    for (const auto& s : list_sessions(*stub_))
      if (s.session_id() == session_id) return s.usage().cpu_user_usec() + s.usage().cpu_system_usec();
    return 0;
  };
  const uint64_t light_before = cpu_usec(light.result.session_id());
  const uint64_t heavy_before = cpu_usec(heavy.result.session_id());
  // Let them compete: a poll of a silent session waits its whole yield.
  poll(*stub_, light.result.session_id(), 4000);
  const uint64_t light_usec = cpu_usec(light.result.session_id()) - light_before;
  const uint64_t heavy_usec = cpu_usec(heavy.result.session_id()) - heavy_before;
  cancel(*stub_, light.result.session_id(), v1::CancelRequest::KILL);
  cancel(*stub_, heavy.result.session_id(), v1::CancelRequest::KILL);
  ASSERT_GT(light_usec, 0u);
  const double ratio = static_cast<double>(heavy_usec) / static_cast<double>(light_usec);
  std::printf("cpu over 4 s: heavy %.2fs, light %.2fs, ratio %.2f (weights 400:100)\n", heavy_usec / 1e6,
              light_usec / 1e6, ratio);
  EXPECT_GT(ratio, 2.0);
  EXPECT_LT(ratio, 8.0);
}

// Both sandbox backends and TTY sessions get the same limits: a sandboxed TTY session and a
// Landlock one-shot run both end "out of memory" under 256 MiB.
TEST_F(LimitsTest, SandboxedTtySessionsAndLandlockRunsGetTheSameLimits) {
  TestDaemonOptions options;  // the default sandbox (workspace-write, bwrap where usable)
  options.extra_config = "[limits]\nmemory_max = \"256M\"\n";
  start_with(options);
  if (IsSkipped()) return;
  auto request = shell_request(*daemon_, std::string(kPython) + " -c 'b = b\"x\" * (4 << 30)'", 30'000);
  request.set_tty(true);
  auto call = exec_command(*stub_, request);
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  EXPECT_NE(call.result.sandbox(), v1::SANDBOX_NONE) << "this test needs a real sandbox";
  ASSERT_TRUE(call.result.has_exit_code()) << call.result.text();
  EXPECT_EQ(call.result.termination(), v1::OUT_OF_MEMORY) << call.result.text();

  // Landlock, forced through Sandbox.RunSandboxed (`codexctl sandbox --backend landlock`).
  auto sandbox_stub = v1::Sandbox::NewStub(daemon_->channel());
  v1::SandboxRunRequest run;
  run.add_argv(kPython);
  run.add_argv("-c");
  run.add_argv("b = b'x' * (4 << 30)");
  run.set_workdir(daemon_->workspace());
  run.set_backend("landlock");
  run.set_timeout_ms(60'000);
  grpc::ClientContext context;
  v1::RunCommandResponse r;
  auto st = sandbox_stub->RunSandboxed(&context, run, &r);
  if (st.error_code() == grpc::StatusCode::UNAVAILABLE) GTEST_SKIP() << "Landlock is not usable here: " << st.error_message();
  ASSERT_TRUE(st.ok()) << describe(st);
  EXPECT_EQ(r.termination(), v1::OUT_OF_MEMORY) << r.text();
  EXPECT_THAT(r.text(), ::testing::HasSubstr("killed: memory limit 256 MiB reached"));
}

// codexctl: sessions shows the usage columns, top the live sessions, status the mechanism.
TEST_F(LimitsTest, CodexctlShowsUsageTopAndMechanism) {
  start("");
  if (IsSkipped()) return;
  auto call = run_session("echo up; exec sleep 60", 500, "watched");
  ASSERT_TRUE(call.result.has_session_id());
  const std::string id = std::to_string(call.result.session_id());
  auto sessions = daemon_->codexctl({"sessions"});
  EXPECT_EQ(sessions.exit_code, 0) << sessions.err;
  EXPECT_THAT(sessions.out, ::testing::HasSubstr("PEAK-MEM"));
  auto top = daemon_->codexctl({"top", "-n", "2", "--interval-ms", "200"});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  EXPECT_THAT(top.out, ::testing::HasSubstr("CPU%"));
  EXPECT_THAT(top.out, ::testing::HasSubstr(id));
  EXPECT_THAT(top.out, ::testing::HasSubstr("watched"));
  auto status = daemon_->codexctl({"status"});
  EXPECT_THAT(status.out, ::testing::HasSubstr("limits:    " + status_.limits().mechanism()));
  cancel(*stub_, call.result.session_id(), v1::CancelRequest::KILL);
}

}  // namespace
}  // namespace codexd::testing
