// The SeatbeltSandboxManager: the sandbox-exec argv, environment markers, danger-full-access,
// refusal without Seatbelt, the trust check on sandbox-exec, and (on macOS only) a real run.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "platform/macos/seatbelt_command.h"
#include "platform/macos/seatbelt_sandbox_manager.h"
#include "tests/macos/scratch_dir.h"
#include "tests/macos/seatbelt_test_util.h"
#include "tests/support/wait_exit.h"

extern char** environ;

namespace codexd::sandbox::macos_backend::testing {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

SeatbeltProbe usable_probe() {
  SeatbeltProbe probe;
  probe.report.chosen = Backend::kMacosSeatbelt;
  return probe;
}

LaunchRequest request(std::vector<std::string> argv, std::vector<std::string> env = {"PATH=/usr/bin:/bin"}) {
  return LaunchRequest{std::move(argv), "/Users/alice/project", std::move(env)};
}

TEST(SeatbeltManager, WrapsTheCommandInSandboxExecByAbsolutePath) {
  SeatbeltSandboxManager manager(usable_probe(), identity_resolver);
  SandboxSpec spec = workspace_spec({{"/Users/alice/project", {"/Users/alice/project/.git"}}});
  // Command words that look like sandbox-exec options must stay the command's.
  Result<LaunchPlan> plan = manager.plan(spec, request({"git", "-p", "--", "-Dx=y"}));
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_EQ(plan->backend, Backend::kMacosSeatbelt);
  EXPECT_EQ(plan->cwd, "/Users/alice/project");
  EXPECT_EQ(plan->executable, "/usr/bin/sandbox-exec") << "never a PATH lookup";

  Result<SeatbeltPolicy> policy = build_seatbelt_policy(spec, identity_options());
  ASSERT_TRUE(policy.ok());
  std::vector<std::string> expected = {"/usr/bin/sandbox-exec",
                                       "-p",
                                       policy->text,
                                       "-DWRITABLE_ROOT_0=/Users/alice/project",
                                       "-DWRITABLE_ROOT_0_EXCLUDED_0=/Users/alice/project/.git",
                                       "--",
                                       "git",
                                       "-p",
                                       "--",
                                       "-Dx=y"};
  EXPECT_EQ(plan->argv, expected);
  EXPECT_EQ(plan->rules, policy->rules);
}

TEST(SeatbeltManager, HostilePathTravelsAsOneDefineWord) {
  SeatbeltSandboxManager manager(usable_probe(), identity_resolver);
  std::string hostile = "/Users/eve/x\") (allow default) -- /bin/sh";
  Result<LaunchPlan> plan = manager.plan(workspace_spec({{hostile, {}}}), request({"true"}));
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_EQ(plan->argv.size(), 6u);
  EXPECT_EQ(plan->argv[3], "-DWRITABLE_ROOT_0=" + hostile);
  EXPECT_EQ(plan->argv[4], "--");
  EXPECT_EQ(plan->argv[2].find(hostile), std::string::npos);
}

TEST(SeatbeltManager, SetsMarkersAndDropsSpoofedOnes) {
  SeatbeltSandboxManager manager(usable_probe(), identity_resolver);
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "CODEX_SANDBOX=none", "CODEXD_SANDBOX=none",
                                  "CODEX_SANDBOX_NETWORK_DISABLED=0", "CODEX_SANDBOXED_TOOL=keep"};
  Result<LaunchPlan> off = manager.plan(workspace_spec({}), request({"env"}, env));
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->env, (std::vector<std::string>{"PATH=/usr/bin:/bin", "CODEX_SANDBOXED_TOOL=keep",
                                                "CODEX_SANDBOX=seatbelt", "CODEXD_SANDBOX=macos-seatbelt",
                                                "CODEX_SANDBOX_NETWORK_DISABLED=1"}));

  Result<LaunchPlan> on = manager.plan(workspace_spec({}, /*network=*/true), request({"env"}, env));
  ASSERT_TRUE(on.ok());
  EXPECT_TRUE(has(on->env, "CODEX_SANDBOX=seatbelt"));
  EXPECT_FALSE(has(on->env, "CODEX_SANDBOX_NETWORK_DISABLED=1"));
  EXPECT_FALSE(has(on->env, "CODEX_SANDBOX_NETWORK_DISABLED=0"));
}

TEST(SeatbeltManager, DangerFullAccessRunsUnwrapped) {
  SeatbeltSandboxManager manager(usable_probe(), identity_resolver);
  SandboxSpec spec;
  spec.mode = SandboxMode::kDangerFullAccess;
  Result<LaunchPlan> plan = manager.plan(spec, request({"make", "install"}, {"A=1"}));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->backend, Backend::kNone);
  EXPECT_EQ(plan->argv, (std::vector<std::string>{"make", "install"}));
  EXPECT_EQ(plan->env, std::vector<std::string>{"A=1"});
}

TEST(SeatbeltManager, RefusesWhenSeatbeltIsUnusable) {
  SeatbeltProbe probe;
  probe.report.warnings.push_back("Seatbelt unusable: /usr/bin/sandbox-exec does not exist");
  SeatbeltSandboxManager manager(probe, identity_resolver);
  for (SandboxSpec spec : {read_only_spec(), workspace_spec({{"/Users/a", {}}})}) {
    Result<LaunchPlan> plan = manager.plan(spec, request({"true"}));
    EXPECT_EQ(plan.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(plan.status().message().find("does not exist"), std::string::npos) << plan.status().message();
  }
  SandboxSpec danger;
  danger.mode = SandboxMode::kDangerFullAccess;
  EXPECT_TRUE(manager.plan(danger, request({"true"})).ok());
}

TEST(SeatbeltManager, RejectsBadRequests) {
  SeatbeltSandboxManager manager(usable_probe(), identity_resolver);
  SandboxSpec spec = read_only_spec();
  EXPECT_EQ(manager.plan(spec, request({})).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(manager.plan(spec, request({""})).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(manager.plan(spec, request({"echo", std::string("a\0b", 3)})).status().code(),
            StatusCode::kInvalidArgument);
  LaunchRequest relative = request({"true"});
  relative.cwd = "project";
  EXPECT_EQ(manager.plan(spec, relative).status().code(), StatusCode::kInvalidArgument);
}

TEST(SeatbeltManager, FactoryReflectsThisPlatform) {
  std::unique_ptr<SandboxManager> manager = create_seatbelt_sandbox_manager(SandboxManagerOptions{});
#ifdef __APPLE__
  EXPECT_EQ(manager->capabilities().chosen, Backend::kMacosSeatbelt)
      << (manager->capabilities().warnings.empty() ? "" : manager->capabilities().warnings.front());
#else
  EXPECT_EQ(manager->capabilities().chosen, Backend::kNone);
  ASSERT_FALSE(manager->capabilities().warnings.empty());
  EXPECT_NE(manager->capabilities().warnings.front().find("only on macOS"), std::string::npos);
  EXPECT_EQ(manager->plan(read_only_spec(), request({"true"})).status().code(), StatusCode::kUnavailable);
#endif
}

TEST(SandboxExecTrust, AcceptsOnlyRootOwnedUnwritableExecutables) {
  // A system binary in root-owned directories passes (sandbox-exec is one on macOS).
  Result<std::string> system_binary = check_trusted_sandbox_exec("/bin/sh");
  EXPECT_TRUE(system_binary.ok()) << system_binary.status().to_string();

  ScratchDir dir;
  std::string tool = dir.sub("sandbox-exec");
  std::ofstream(tool) << "#!/bin/sh\n";
  ::chmod(tool.c_str(), 0755);
  Result<std::string> own = check_trusted_sandbox_exec(tool);
  if (::geteuid() == 0) {
    EXPECT_TRUE(own.ok()) << own.status().to_string();
  } else {
    EXPECT_EQ(own.status().code(), StatusCode::kPermissionDenied) << "owned by a non-root uid";
  }
  ::chmod(tool.c_str(), 0775);
  EXPECT_EQ(check_trusted_sandbox_exec(tool).status().code(), StatusCode::kPermissionDenied);
  ::chmod(tool.c_str(), 0644);
  EXPECT_EQ(check_trusted_sandbox_exec(tool).status().code(), StatusCode::kPermissionDenied);
  ::chmod(tool.c_str(), 0755);
  ::chmod(dir.path().c_str(), 0777);
  EXPECT_EQ(check_trusted_sandbox_exec(tool).status().code(), StatusCode::kPermissionDenied)
      << "a writable parent directory lets anyone swap the binary";
  ::chmod(dir.path().c_str(), 0700);
  EXPECT_EQ(check_trusted_sandbox_exec(dir.path()).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(check_trusted_sandbox_exec(dir.sub("missing")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(check_trusted_sandbox_exec("sandbox-exec").status().code(), StatusCode::kInvalidArgument);
}

// Runs a plan and returns its exit status (-1 when it could not be started).
int run_plan(const LaunchPlan& plan) {
  std::vector<char*> argv;
  for (const std::string& word : plan.argv) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& entry : plan.env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);
  std::string old_cwd = std::filesystem::current_path().string();
  std::filesystem::current_path(plan.cwd);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data());
  std::filesystem::current_path(old_cwd);
  if (rc != 0) return -1;
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return codexd::testing::exit_code_of(status);
}

// Only meaningful where sandbox-exec exists; compiled everywhere so it cannot rot.
TEST(SeatbeltOnMacos, WritesLandOnlyOutsideProtectedPaths) {
#ifndef __APPLE__
  GTEST_SKIP() << "needs macOS: /usr/bin/sandbox-exec runs only there";
#endif
  std::unique_ptr<SandboxManager> manager = create_seatbelt_sandbox_manager(SandboxManagerOptions{});
  ASSERT_EQ(manager->capabilities().chosen, Backend::kMacosSeatbelt);
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  dir.make_dir("ws/.git");
  dir.make_dir("outside");
  Result<std::string> real_ws = resolve_for_seatbelt(ws);
  ASSERT_TRUE(real_ws.ok());
  SandboxSpec spec = workspace_spec({{*real_ws, {*real_ws + "/.git", *real_ws + "/.codex"}}});
  auto run = [&](const std::string& script) {
    LaunchRequest req{{"/bin/sh", "-c", script}, ws, {"PATH=/usr/bin:/bin"}};
    Result<LaunchPlan> plan = manager->plan(spec, req);
    EXPECT_TRUE(plan.ok()) << plan.status().to_string();
    return plan.ok() ? run_plan(*plan) : -1;
  };
  EXPECT_EQ(run("echo ok > ok.txt"), 0);
  EXPECT_NE(run("echo x > .git/config"), 0);
  EXPECT_NE(run("mkdir .codex"), 0);
  EXPECT_NE(run("echo x > " + dir.sub("outside/file")), 0);
  EXPECT_EQ(run("cat /etc/hosts > /dev/null"), 0);
  EXPECT_EQ(run("test \"$CODEX_SANDBOX\" = seatbelt"), 0);
}

}  // namespace
}  // namespace codexd::sandbox::macos_backend::testing
