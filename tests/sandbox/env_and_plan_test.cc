// Plans end to end: markers, loader variables, danger-full-access, helper placement, and a
// helper that fails before exec.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>

#include "platform/sandbox/format.h"
#include "tests/sandbox/backend_param.h"

namespace codexd::sandbox::testing {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

class PlanTest : public BackendTest {};

TEST_P(PlanTest, MarkersAreSetAndCannotBeSpoofed) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "CODEXD_SANDBOX=none",
                                  "CODEX_SANDBOX_NETWORK_DISABLED=0"};
  LaunchPlan plan = make_plan(*manager, make_spec(ws), {probe_path(), "env", "CODEXD_SANDBOX"}, ws, env);
  std::string marker = std::string("CODEXD_SANDBOX=") +
                       (GetParam() == TestBackend::kBwrap ? "linux-bwrap" : "linux-landlock");
  EXPECT_TRUE(has(plan.env, marker));
  EXPECT_TRUE(has(plan.env, "CODEX_SANDBOX_NETWORK_DISABLED=1"));
  EXPECT_FALSE(has(plan.env, "CODEXD_SANDBOX=none"));
  EXPECT_FALSE(has(plan.env, "CODEX_SANDBOX_NETWORK_DISABLED=0"));
  RunResult run = run_plan(plan);
  EXPECT_TRUE(run.succeeded()) << run.describe();
  EXPECT_NE(run.output.find("ENV " + marker), std::string::npos) << run.describe();

  for (NetworkMode mode : {NetworkMode::kProxy, NetworkMode::kHost}) {
    SpecOptions network_on;
    network_on.network = mode;
    plan = make_plan(*manager, make_spec(ws, network_on), {probe_path(), "true"}, ws, env);
    EXPECT_FALSE(has(plan.env, "CODEX_SANDBOX_NETWORK_DISABLED=1"));
    EXPECT_FALSE(has(plan.env, "CODEX_SANDBOX_NETWORK_DISABLED=0"));
    EXPECT_TRUE(has(plan.env, "CODEXD_SANDBOX_NETWORK=" + std::string(to_string(mode))));
  }
}

TEST_P(PlanTest, LoaderVariablesReachOnlyTheCommand) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "LD_LIBRARY_PATH=/nonexistent-codexd"};
  LaunchPlan plan = make_plan(*manager, make_spec(ws), {probe_path(), "env", "LD_LIBRARY_PATH"}, ws, env);
  EXPECT_FALSE(has(plan.env, "LD_LIBRARY_PATH=/nonexistent-codexd")) << "bwrap/helper must not see it";
  EXPECT_TRUE(has(plan.argv, "--setenv=LD_LIBRARY_PATH=/nonexistent-codexd"));
  RunResult run = run_plan(plan);
  EXPECT_TRUE(run.succeeded()) << run.describe();
  EXPECT_NE(run.output.find("ENV LD_LIBRARY_PATH=/nonexistent-codexd"), std::string::npos);
}

TEST_P(PlanTest, DangerFullAccessRunsTheCommandAsIs) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  ScratchDir dir;
  SpecOptions options;
  options.mode = SandboxMode::kDangerFullAccess;
  SandboxSpec spec = make_spec(dir.path(), options);
  LaunchRequest request{{"/bin/echo", "hi"}, dir.path(), {"A=1"}};
  Result<LaunchPlan> plan = manager->plan(spec, request);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->backend, Backend::kNone);
  EXPECT_EQ(plan->argv, request.argv);
  EXPECT_EQ(plan->env, request.env);
  EXPECT_EQ(plan->executable, "/bin/echo");
}

// What the orchestrator runs when the policy bypasses the sandbox: the command as given,
// argv[0] resolved in the child's PATH (not the daemon's).
TEST_P(PlanTest, PlanUnconfinedResolvesInTheChildPath) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  ScratchDir dir;
  std::string bin = dir.make_dir("bin");
  std::string tool = dir.make_file("bin/tool", "#!/bin/sh\n");
  ::chmod(tool.c_str(), 0755);
  LaunchRequest request{{"tool", "x"}, dir.path(), {"PATH=/nonexistent:" + bin, "A=1"}};
  Result<LaunchPlan> plan = manager->plan_unconfined(request);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_EQ(plan->backend, Backend::kNone);
  EXPECT_EQ(plan->executable, tool);
  EXPECT_EQ(plan->argv, request.argv);
  EXPECT_EQ(plan->env, request.env) << "no sandbox markers without a sandbox";
  EXPECT_EQ(plan->cwd, dir.path());
  request.env = {"PATH=/nonexistent"};
  EXPECT_EQ(manager->plan_unconfined(request).status().code(), StatusCode::kNotFound);
}

TEST_P(PlanTest, AConfinedPlanExecsTheFirstWordOfItsArgv) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  LaunchPlan plan = make_plan(*manager, make_spec(ws), {"true"}, ws);
  EXPECT_EQ(plan.executable, plan.argv.front());
  EXPECT_EQ(plan.executable.front(), '/') << plan.executable;
}

TEST_P(PlanTest, HelperInsideAWritableRootIsRefused) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  const std::string& helper = helper_path();
  std::string helper_dir = helper.substr(0, helper.rfind('/'));
  SandboxSpec spec = make_spec(helper_dir);
  Result<LaunchPlan> plan = manager->plan(spec, {{"/bin/true"}, helper_dir, {}});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(plan.status().message().find("could replace it"), std::string::npos);
}

TEST_P(PlanTest, BadRequestsAreRejected) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  ScratchDir dir;
  SandboxSpec spec = make_spec(dir.path());
  EXPECT_EQ(manager->plan(spec, {{}, "/", {}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(manager->plan(spec, {{"true"}, "relative", {}}).status().code(), StatusCode::kInvalidArgument);
}

TEST_P(PlanTest, PlanIsPrintable) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  LaunchPlan plan = make_plan(*manager, make_spec(ws), {"/bin/true"}, ws);
  std::string text = format_launch_plan(plan);
  std::cout << text;
  EXPECT_NE(text.find("seccomp:"), std::string::npos);
  EXPECT_NE(text.find(ws), std::string::npos);
}

TEST_P(PlanTest, HelperFailureNeverRunsTheCommand) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  std::string marker = ws + "/ran";
  LaunchPlan plan = make_plan(*manager, make_spec(ws), {probe_path(), "write", marker}, ws);
  // Corrupt the helper's own arguments: it must refuse, not run the command unfiltered.
  auto helper_at = plan.argv.begin();
  if (GetParam() == TestBackend::kBwrap) {
    std::vector<std::string> exec_helper = {"--", helper_path()};
    helper_at = std::search(plan.argv.begin(), plan.argv.end(), exec_helper.begin(), exec_helper.end()) + 1;
  }
  ASSERT_TRUE(helper_at < plan.argv.end() && *helper_at == helper_path());
  plan.argv.insert(helper_at + 1, "--no-such-option");
  RunResult run = run_plan(plan);
  EXPECT_EQ(run.exit_code, 126) << run.describe();
  EXPECT_NE(run.output.find("codexd-sandbox-helper: arguments"), std::string::npos) << run.describe();
  EXPECT_FALSE(path_exists(marker));
}

TEST_P(PlanTest, CommandNotFoundIs127) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  RunResult run = run_plan(make_plan(*manager, make_spec(ws), {"no-such-command-codexd"}, ws));
  EXPECT_EQ(run.exit_code, 127) << run.describe();
}

CODEXD_INSTANTIATE_BOTH_BACKENDS(PlanTest);

}  // namespace
}  // namespace codexd::sandbox::testing
