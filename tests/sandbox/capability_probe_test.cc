#include "platform/linux/capability_probe.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "platform/linux/trusted_executable.h"
#include "platform/sandbox/format.h"
#include "tests/sandbox/sandbox_test_support.h"

namespace codexd::sandbox::linux_backend {
namespace {

using testing::ScratchDir;

TEST(CapabilityProbe, ClassifiesCodexFailureTexts) {
  EXPECT_EQ(classify_bwrap_failure("bwrap: Can't mount proc on /newroot/proc: Operation not permitted"),
            BwrapFailure::kProcMount);
  EXPECT_EQ(classify_bwrap_failure("bwrap: setting up uid map: Permission denied"),
            BwrapFailure::kUserNamespace);
  EXPECT_EQ(classify_bwrap_failure("bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted"),
            BwrapFailure::kUserNamespace);
  EXPECT_EQ(classify_bwrap_failure("bwrap: No permissions to create a new namespace"),
            BwrapFailure::kUserNamespace);
  EXPECT_EQ(classify_bwrap_failure("bwrap: something else"), BwrapFailure::kOther);
  EXPECT_EQ(classify_bwrap_failure(""), BwrapFailure::kNone);
}

TEST(CapabilityProbe, ParsesHelpFlags) {
  std::vector<std::string> flags = parse_bwrap_help_flags(
      "usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]\n\n    --help                       Print this help\n"
      "    --disable-userns             Disable further use\n    --perms OCTAL                Set\n");
  EXPECT_EQ(flags, (std::vector<std::string>{"--help", "--disable-userns", "--perms"}));
}

TEST(CapabilityProbe, RealMachineReport) {
  SandboxManagerOptions options;
  options.helper_path = testing::helper_path();
  LinuxProbe probe = probe_linux_sandbox(options, options.helper_path);
  std::cout << format_capability_report(probe.report);
  EXPECT_TRUE(probe.report.helper_usable) << format_capability_report(probe.report);
  EXPECT_GE(probe.report.landlock_abi, 0);
  if (probe.report.chosen == Backend::kLinuxBwrap) {
    EXPECT_TRUE(probe.report.user_namespaces_usable);
    EXPECT_FALSE(probe.report.bwrap_version.empty());
  }
}

TEST(CapabilityProbe, AnExhaustedBoundNeverPicksAnUnverifiedBackend) {
  SandboxManagerOptions options;
  options.helper_path = testing::helper_path();
  options.probe_timeout_ms = 1;
  LinuxProbe probe = probe_linux_sandbox(options, options.helper_path);
  // Whatever finished in 1 ms, bwrap is only chosen if its namespace run really succeeded.
  if (probe.report.chosen == Backend::kLinuxBwrap) {
    EXPECT_TRUE(probe.report.user_namespaces_usable);
  }
  if (probe.report.chosen != Backend::kNone) {
    EXPECT_TRUE(probe.report.helper_usable);
  }
}

TEST(CapabilityProbe, WithoutBwrapAutoFallsBackToLandlockAndBwrapPreferenceRefuses) {
  SandboxManagerOptions options;
  options.helper_path = testing::helper_path();
  options.no_bwrap = true;
  LinuxProbe probe = probe_linux_sandbox(options, options.helper_path);
  if (probe.report.landlock_abi < 1) GTEST_SKIP() << "kernel without Landlock";
  EXPECT_EQ(probe.report.chosen, Backend::kLinuxLandlock);

  options.preference = BackendPreference::kBwrap;
  std::unique_ptr<SandboxManager> manager = create_sandbox_manager(options);
  EXPECT_EQ(manager->capabilities().chosen, Backend::kNone);
  SandboxSpec spec;
  spec.mode = SandboxMode::kReadOnly;
  Result<LaunchPlan> plan = manager->plan(spec, {{"/bin/true"}, "/", {}});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(plan.status().message().find("bwrap disabled"), std::string::npos) << plan.status().message();
  spec.mode = SandboxMode::kDangerFullAccess;
  EXPECT_TRUE(manager->plan(spec, {{"/bin/true"}, "/", {}}).ok());
}

TEST(TrustedExecutable, RejectsWritableOrRelativeOrWorkspaceCandidates) {
  ScratchDir dir;
  std::string copy = dir.sub("bwrap");
  std::filesystem::copy_file("/usr/bin/bwrap", copy);
  ::chmod(copy.c_str(), 0777);
  EXPECT_FALSE(verify_trusted_executable(copy, 0).ok()) << "world-writable file";
  ::chmod(copy.c_str(), 0755);
  std::string open_dir = dir.make_dir("open");
  ::chmod(open_dir.c_str(), 0777);
  std::filesystem::copy_file("/usr/bin/bwrap", open_dir + "/bwrap");
  EXPECT_FALSE(verify_trusted_executable(open_dir + "/bwrap", 0).ok()) << "world-writable directory";
  EXPECT_FALSE(verify_trusted_executable("bwrap", 0).ok());
  EXPECT_FALSE(verify_trusted_executable(dir.path(), 0).ok()) << "a directory";

  std::vector<std::string> warnings;
  Result<std::string> found = find_trusted_bwrap({"bwrap", open_dir + "/bwrap", copy}, dir.path(), &warnings);
  EXPECT_FALSE(found.ok()) << "the only trusted copy lies inside the forbidden working directory";
  EXPECT_EQ(warnings.size(), 3u);
  if (::access("/usr/bin/bwrap", X_OK) == 0) {
    warnings.clear();
    found = find_trusted_bwrap({}, dir.path(), &warnings);
    ASSERT_TRUE(found.ok()) << found.status().to_string();
    EXPECT_EQ(*found, "/usr/bin/bwrap");
  }
}

}  // namespace
}  // namespace codexd::sandbox::linux_backend
