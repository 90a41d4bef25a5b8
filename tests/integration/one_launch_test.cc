// One launch pipeline: for the same command, workdir and sandbox policy, every entry point
// builds the identical launch (identity, environment, sandbox argv and rules):
//   - Exec.RunCommand and Exec.ExecCommand with dry_run (the orchestrator's plan),
//   - Sandbox.RunSandboxed with plan_only,
//   - `codexctl sandbox --plan`,
//   - `codexd --print-sandbox-plan` with the daemon's own config.
// Before the LaunchBuilder these disagreed (system-mode PATH, $TMPDIR as a writable root,
// which streams the denial check read), so a plan could show a sandbox a command did not get.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "codexd/v1/exec.grpc.pb.h"
#include "codexd/v1/sandbox.grpc.pb.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_daemon.h"

namespace codexd::testing {
namespace {

const std::vector<std::string> kCommand = {"/bin/sh", "-c", "echo 'it''s' \"$HOME\""};

std::vector<std::string> strings(const google::protobuf::RepeatedPtrField<std::string>& r) { return {r.begin(), r.end()}; }

class OneLaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.started()) << daemon_.daemon_log();
    exec_ = v1::Exec::NewStub(daemon_.channel());
    sandbox_ = v1::Sandbox::NewStub(daemon_.channel());
  }
  void TearDown() override {
    exec_.reset();
    sandbox_.reset();
    EXPECT_EQ(daemon_.stop(), 0) << daemon_.daemon_log();
  }

  v1::ExecPlan run_command_plan() {
    v1::RunCommandRequest request;
    for (const auto& a : kCommand) request.add_argv(a);
    request.set_workdir(daemon_.workspace());
    request.set_dry_run(true);
    v1::RunCommandResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(exec_->RunCommand(&context, request, &response).ok());
    EXPECT_FALSE(response.has_rejection()) << response.rejection().message();
    return response.plan();
  }

  v1::ExecPlan exec_command_plan() {
    v1::ExecCommandRequest request;
    for (const auto& a : kCommand) request.add_argv(a);
    request.set_workdir(daemon_.workspace());
    request.set_dry_run(true);
    v1::ExecResult response;
    grpc::ClientContext context;
    EXPECT_TRUE(exec_->ExecCommand(&context, request, &response).ok());
    EXPECT_FALSE(response.has_rejection()) << response.rejection().message();
    return response.plan();
  }

  v1::RunCommandResponse sandbox_plan() {
    v1::SandboxRunRequest request;
    for (const auto& a : kCommand) request.add_argv(a);
    request.set_workdir(daemon_.workspace());
    request.set_plan_only(true);
    v1::RunCommandResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(sandbox_->RunSandboxed(&context, request, &response).ok());
    EXPECT_FALSE(response.has_rejection()) << response.rejection().message();
    return response;
  }

  TestDaemonOptions options() const {
    TestDaemonOptions o;  // workspace-write, the default sandbox
    o.env = {tmpdir_env()};
    return o;
  }
  // The daemon's $TMPDIR becomes a writable root (user mode); RunSandboxed used to leave it out.
  // A directory of its own, so it never contains the checkout (the sandbox refuses a helper
  // inside a writable root, and /var/tmp itself may hold the clone).
  std::string tmpdir_env() const { return "TMPDIR=" + tmpdir_.path(); }

  TempDir tmpdir_{"codexd-onelaunch-tmpdir", TempLocation::kOutsideTmp};
  TestDaemon daemon_{options()};
  std::unique_ptr<v1::Exec::Stub> exec_;
  std::unique_ptr<v1::Sandbox::Stub> sandbox_;
};

TEST_F(OneLaunchTest, RunCommandAndRunSandboxedBuildTheSameLaunch) {
  v1::ExecPlan orchestrated = run_command_plan();
  v1::RunCommandResponse sandboxed = sandbox_plan();
  const v1::ExecPlan& debug = sandboxed.plan();
  ASSERT_FALSE(orchestrated.launch_argv().empty());
  EXPECT_NE(sandboxed.sandbox(), v1::SANDBOX_NONE) << "the test needs a real sandbox";
  EXPECT_EQ(strings(orchestrated.launch_argv()), strings(debug.launch_argv()));
  EXPECT_EQ(strings(orchestrated.env()), strings(debug.env()));
  EXPECT_EQ(strings(orchestrated.sandbox_rules()), strings(debug.sandbox_rules()));
  EXPECT_EQ(orchestrated.run_as_uid(), debug.run_as_uid());
  // Both plans describe their sandbox the same way, backend included (never left unset).
  EXPECT_EQ(debug.sandbox().backend(), sandboxed.sandbox());
  EXPECT_EQ(orchestrated.sandbox().backend(), debug.sandbox().backend());
  EXPECT_EQ(orchestrated.sandbox().mode(), debug.sandbox().mode());
  EXPECT_EQ(strings(orchestrated.sandbox().writable_roots()), strings(debug.sandbox().writable_roots()));
  EXPECT_THAT(strings(debug.sandbox_rules()), ::testing::Contains(::testing::HasSubstr(tmpdir_.path())))
      << "the daemon's $TMPDIR is a writable root for every entry point";
  EXPECT_THAT(strings(orchestrated.sandbox_rules()),
              ::testing::Contains(::testing::HasSubstr("private /tmp: " + daemon_.private_tmp_base() + "/")))
      << "every entry point mounts the same private /tmp";
}

TEST_F(OneLaunchTest, ExecCommandDiffersOnlyByTheUnifiedExecOverlay) {
  v1::ExecPlan unified = exec_command_plan();
  v1::ExecPlan classic = run_command_plan();
  EXPECT_EQ(strings(unified.launch_argv()), strings(classic.launch_argv()));
  EXPECT_EQ(strings(unified.sandbox_rules()), strings(classic.sandbox_rules()));
  // Codex's unified-exec overlay (docs/api.md): these variables, and nothing else, differ.
  const std::set<std::string> overlay = {"NO_COLOR", "TERM", "LANG", "LC_CTYPE", "LC_ALL", "COLORTERM",
                                         "PAGER", "GIT_PAGER", "GH_PAGER", "CODEX_CI"};
  auto without_overlay = [&](const v1::ExecPlan& plan) {
    std::vector<std::string> out;
    for (const auto& e : plan.env()) {
      if (!overlay.count(e.substr(0, e.find('=')))) out.push_back(e);
    }
    return out;
  };
  EXPECT_EQ(without_overlay(unified), without_overlay(classic));
}

TEST_F(OneLaunchTest, CodexctlAndCodexdPrintTheSameLaunchAsTheDaemonBuilds) {
  const std::string expected = sandbox_plan().text();
  ASSERT_THAT(expected, ::testing::HasSubstr("argv:"));

  std::vector<std::string> ctl = {"sandbox", "--plan", "-C", daemon_.workspace(), "--"};
  ctl.insert(ctl.end(), kCommand.begin(), kCommand.end());
  ProcessResult codexctl = daemon_.codexctl(ctl);
  ASSERT_EQ(codexctl.exit_code, 0) << codexctl.err;
  EXPECT_EQ(codexctl.out, expected + "\n");

  // codexd itself, with the daemon's config, in the same environment the daemon has.
  std::vector<std::string> cmd = {TestDaemon::codexd_binary(), "--config", daemon_.dir() + "/codexd.toml",
                                  "--print-sandbox-plan", "--workdir", daemon_.workspace(), "--"};
  cmd.insert(cmd.end(), kCommand.begin(), kCommand.end());
  ProcessResult codexd = run_process(cmd, "", std::nullopt, {tmpdir_env()});
  ASSERT_EQ(codexd.exit_code, 0) << codexd.err;
  EXPECT_THAT(codexd.out, ::testing::HasSubstr(expected)) << "codexd --print-sandbox-plan shows another launch";
}

}  // namespace
}  // namespace codexd::testing
