// The LaunchBuilder's defaults, one constant each, whatever entry point asks: the system-mode
// environment, $TMPDIR as a writable root (user mode only, from the daemon's environment),
// codexd's socket directory masked, and how a launch that cannot be built is reported.
#include "daemon/orchestrator/launch_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "tests/orchestrator/orchestrator_test_util.h"

namespace codexd::orchestrator {
namespace {

using ::testing::Contains;
using ::testing::Not;

struct Builder {
  explicit Builder(config::DaemonMode mode) {
    config = config::default_config(mode);
    config.sandbox.policy.mode = sandbox::SandboxMode::kWorkspaceWrite;
    tmpdir = dir.path() + "/tmpdir";
    std::filesystem::create_directories(tmpdir);
    std::filesystem::create_directories(dir.path() + "/sock");
    LaunchBuilderDeps deps;
    deps.config = &config;
    deps.sandbox = &fake;
    deps.base_env = {{"PATH", "/usr/bin:/bin"}, {"DAEMON_ONLY", "1"}, {"TMPDIR", tmpdir}};
    deps.socket_dir = dir.path() + "/sock";
    builder = std::make_unique<LaunchBuilder>(std::move(deps));
  }
  std::vector<std::string> roots(const sandbox::SandboxSpec& spec) const {
    std::vector<std::string> out;
    for (const auto& r : spec.writable_roots) out.push_back(r.root);
    return out;
  }

  test::TempDir dir;
  std::string tmpdir;
  config::Config config;
  test::FakeSandbox fake;
  std::unique_ptr<LaunchBuilder> builder;
};

TEST(LaunchBuilder, SystemModeStartsFromItsOwnEnvironmentNotTheDaemons) {
  Builder b(config::DaemonMode::kSystem);
  RunAs run_as;
  run_as.shell = "/bin/zsh";
  run_as.forced_env = {{"HOME", "/home/alice"}, {"USER", "alice"}, {"LOGNAME", "alice"}};
  LaunchInput input;
  input.argv = {"/bin/true"};
  input.workdir = b.dir.path();
  auto env = b.builder->environment(run_as, input);
  EXPECT_THAT(env, Contains("PATH=" + std::string(kSystemModePath)));
  EXPECT_THAT(env, Contains("SHELL=/bin/zsh"));
  EXPECT_THAT(env, Contains("LANG=" + std::string(kSystemModeLang)));
  EXPECT_THAT(env, Contains("HOME=/home/alice"));
  EXPECT_THAT(env, Not(Contains("DAEMON_ONLY=1")));
}

TEST(LaunchBuilder, UserModeInheritsTheDaemonsEnvironment) {
  Builder b(config::DaemonMode::kUser);
  LaunchInput input;
  input.argv = {"/bin/true"};
  input.workdir = b.dir.path();
  input.env = {{"FROM_REQUEST", "x"}};
  auto env = b.builder->environment(RunAs{}, input);
  EXPECT_THAT(env, Contains("DAEMON_ONLY=1"));
  EXPECT_THAT(env, Contains("FROM_REQUEST=x"));
  EXPECT_THAT(env, Not(Contains("NO_COLOR=1"))) << "the unified-exec overlay is for ExecCommand only";
  input.unified_exec = true;
  EXPECT_THAT(b.builder->environment(RunAs{}, input), Contains("NO_COLOR=1"));
}

TEST(LaunchBuilder, DaemonTmpdirIsAWritableRootOnlyInUserMode) {
  Builder user(config::DaemonMode::kUser);
  user.config.sandbox.private_tmp = false;  // the daemon's $TMPDIR lies inside /tmp here
  auto spec = user.builder->resolve_sandbox(user.builder->configured_policy_for(""), user.dir.path(), RunAs{}, "");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_THAT(user.roots(*spec), Contains(user.tmpdir));
  EXPECT_THAT(spec->masked_paths, Contains(user.dir.path() + "/sock"));
  // With the private /tmp (the default), a $TMPDIR inside the host /tmp is replaced by it.
  user.config.sandbox.private_tmp = true;
  user.config.sandbox.private_tmp_dir = user.dir.path() + "/private";
  spec = user.builder->resolve_sandbox(user.builder->configured_policy_for(""), user.dir.path(), RunAs{}, "agent");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_THAT(user.roots(*spec), Not(Contains(user.tmpdir)));
  EXPECT_EQ(spec->private_tmp, PrivateTmpStore::path_in(user.dir.path() + "/private", 0, "agent"))
      << "without a store (codexd --print-sandbox-plan) the path is named, not made";

  Builder system(config::DaemonMode::kSystem);
  spec = system.builder->resolve_sandbox(system.builder->configured_policy_for(""), system.dir.path(), RunAs{}, "");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_THAT(system.roots(*spec), Not(Contains(system.tmpdir))) << "a system daemon's $TMPDIR is not the caller's";
  EXPECT_THAT(spec->masked_paths, Contains(system.dir.path() + "/sock"));
}

TEST(LaunchBuilder, UnconfinedLaunchResolvesTheProgramInTheChildsPath) {
  Builder b(config::DaemonMode::kUser);
  auto spec = b.builder->resolve_sandbox(b.builder->configured_policy_for(""), b.dir.path(), RunAs{}, "");
  ASSERT_TRUE(spec.ok());
  LaunchInput input;
  input.argv = {"sh", "-c", "true"};
  input.workdir = b.dir.path();
  auto built = b.builder->build(RunAs{}, *spec, /*confined=*/false, input);
  ASSERT_TRUE(built.ok()) << built.status().message();
  EXPECT_EQ(built->spec.sandbox, sandbox::Backend::kNone);
  EXPECT_TRUE(built->spec.executable == "/usr/bin/sh" || built->spec.executable == "/bin/sh") << built->spec.executable;
  EXPECT_EQ(built->spec.argv.front(), "sh") << "argv[0] stays as asked";
  EXPECT_EQ(b.fake.plans, 0) << "no sandbox was asked for";

  input.argv = {"no-such-program-anywhere"};
  built = b.builder->build(RunAs{}, *spec, /*confined=*/false, input);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(launch_rejection(built.status()).reason, Rejection::Reason::kSpawnFailed);
}

TEST(LaunchBuilder, AConfinedLaunchThatNoSandboxCanEnforceIsRefusedNeverRunBare) {
  Builder b(config::DaemonMode::kUser);
  b.fake.fail = true;
  auto spec = b.builder->resolve_sandbox(b.builder->configured_policy_for(""), b.dir.path(), RunAs{}, "");
  ASSERT_TRUE(spec.ok());
  LaunchInput input;
  input.argv = {"/bin/true"};
  input.workdir = b.dir.path();
  auto built = b.builder->build(RunAs{}, *spec, /*confined=*/true, input);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(launch_rejection(built.status()).reason, Rejection::Reason::kSandboxUnavailable);
}

TEST(LaunchBuilder, ASandboxedLaunchIsExactlyWhatTheBackendPlanned) {
  Builder b(config::DaemonMode::kUser);
  auto spec = b.builder->resolve_sandbox(b.builder->configured_policy_for(""), b.dir.path(), RunAs{}, "");
  ASSERT_TRUE(spec.ok());
  LaunchInput input;
  input.argv = {"/bin/echo", "hi"};
  input.workdir = b.dir.path();
  input.tty = true;
  input.rows = 40;
  auto built = b.builder->build(RunAs{}, *spec, /*confined=*/true, input);
  ASSERT_TRUE(built.ok()) << built.status().message();
  EXPECT_EQ(built->spec.executable, "/fake/bwrap");
  EXPECT_EQ(built->spec.argv, built->plan.argv);
  EXPECT_EQ(built->spec.env, built->plan.env);
  EXPECT_EQ(built->spec.sandbox, sandbox::Backend::kLinuxBwrap);
  EXPECT_TRUE(built->spec.tty);
  EXPECT_EQ(built->spec.rows, 40);
}

}  // namespace
}  // namespace codexd::orchestrator
