#include "platform/linux/capability_probe.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "platform/backends/manager_factory.h"
#include "platform/linux/linux_sandbox_manager.h"
#include "platform/linux/trusted_executable.h"
#include "platform/posix/root_owned.h"
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
  LinuxProbe probe = probe_linux_sandbox(options, {}, options.helper_path);
  std::cout << format_capability_report(probe.report);
  EXPECT_TRUE(probe.report.helper_usable) << format_capability_report(probe.report);
  EXPECT_GE(probe.caps.landlock_abi, 0);
  if (probe.report.chosen == Backend::kLinuxBwrap) {
    EXPECT_TRUE(probe.caps.user_namespaces_usable);
    EXPECT_FALSE(probe.caps.bwrap_version.empty());
  }
  // The neutral report shows the Linux details as facts, and the manager hands them out.
  EXPECT_EQ(probe.report.facts.size(), capability_facts(probe.caps).size());
  std::unique_ptr<SandboxManager> manager = create_sandbox_manager(options);
  ASSERT_NE(linux_capabilities(*manager), nullptr);
  EXPECT_EQ(linux_capabilities(*manager)->landlock_abi, probe.caps.landlock_abi);
  EXPECT_EQ(linux_capabilities(*create_unavailable_sandbox_manager()), nullptr);
}

TEST(CapabilityProbe, AnExhaustedBoundNeverPicksAnUnverifiedBackend) {
  SandboxManagerOptions options;
  options.helper_path = testing::helper_path();
  options.probe_timeout_ms = 1;
  LinuxProbe probe = probe_linux_sandbox(options, {}, options.helper_path);
  // Whatever finished in 1 ms, bwrap is only chosen if its namespace run really succeeded.
  if (probe.report.chosen == Backend::kLinuxBwrap) {
    EXPECT_TRUE(probe.caps.user_namespaces_usable);
  }
  if (probe.report.chosen != Backend::kNone) {
    EXPECT_TRUE(probe.report.helper_usable);
  }
}

TEST(CapabilityProbe, WithoutBwrapAutoFallsBackToLandlockAndBwrapPreferenceRefuses) {
  SandboxManagerOptions options;
  options.helper_path = testing::helper_path();
  LinuxSandboxOptions linux_options;
  linux_options.no_bwrap = true;
  LinuxProbe probe = probe_linux_sandbox(options, linux_options, options.helper_path);
  if (probe.caps.landlock_abi < 1) GTEST_SKIP() << "kernel without Landlock";
  EXPECT_EQ(probe.report.chosen, Backend::kLinuxLandlock);

  options.preference = BackendPreference::kBwrap;
  std::unique_ptr<SandboxManager> manager = create_linux_sandbox_manager(options, linux_options);
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

// The one ownership check behind the helper, bwrap, sandbox-exec and the system-mode config.
TEST(RootOwned, TheFileAndEveryDirectoryAboveOnlyStickyDirectoriesHigherUp) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to own the scratch files";
  ScratchDir dir;  // 0700 root, below the sticky /var/tmp (two levels up from a file in it)
  std::string file = dir.make_file("config.toml");
  ::chmod(file.c_str(), 0644);
  Result<std::string> ok = posix::check_root_owned(file, "");
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(*ok, file);

  ::chmod(file.c_str(), 0664);
  Result<std::string> group_writable = posix::check_root_owned(file, "config");
  ASSERT_EQ(group_writable.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(group_writable.status().message(),
            "config " + file + ": writable by someone other than root (owner uid 0, mode 0664)");
  ::chmod(file.c_str(), 0644);

  // A sticky, world-writable directory holding the file itself is not good enough ...
  ::chmod(dir.path().c_str(), 01777);
  Result<std::string> sticky_parent = posix::check_root_owned(file, "");
  ASSERT_EQ(sticky_parent.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(sticky_parent.status().message().find("directory " + dir.path() + " of " + file +
                                                  ": writable by someone other than root"),
            std::string::npos)
      << sticky_parent.status().message();
  // ... but two levels up it is (others cannot replace an entry they do not own).
  std::string nested = dir.make_file("etc/rules");
  ::chmod(nested.c_str(), 0644);
  ::chmod(dir.sub("etc").c_str(), 0755);
  EXPECT_TRUE(posix::check_root_owned(nested, "").ok());
  ::chmod(dir.path().c_str(), 0777);
  EXPECT_EQ(posix::check_root_owned(nested, "").status().code(), StatusCode::kPermissionDenied)
      << "a non-sticky world-writable directory anywhere above";
  ::chmod(dir.path().c_str(), 0700);

  EXPECT_EQ(posix::check_root_owned(dir.sub("missing"), "").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(posix::check_root_owned_executable(file, "").status().code(), StatusCode::kPermissionDenied)
      << "not executable";
  EXPECT_EQ(posix::check_root_owned_executable("bwrap", "").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace codexd::sandbox::linux_backend
