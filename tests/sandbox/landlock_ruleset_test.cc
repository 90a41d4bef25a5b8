// Unit tests of the Landlock split (which grants are computed); the escape tests prove the
// kernel then enforces them.
#include "platform/linux/landlock_ruleset.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "platform/linux/landlock_sys.h"
#include "tests/sandbox/sandbox_test_support.h"

namespace codexd::sandbox::linux_backend {
namespace {

using testing::ScratchDir;

uint64_t access_for(const std::vector<LandlockGrant>& grants, const std::string& path) {
  for (const LandlockGrant& g : grants) {
    if (g.path == path) return g.access;
  }
  return 0;
}

TEST(LandlockRuleset, RootWithoutProtectedPathsIsGrantedWhole) {
  ScratchDir dir;
  HelperConfig config;
  config.writable = {dir.path()};
  std::vector<LandlockGrant> grants = plan_landlock_grants(config, 3);
  EXPECT_EQ(access_for(grants, "/"), landlock::kReadRights);
  EXPECT_EQ(access_for(grants, dir.path()), landlock::write_rights(3));
}

TEST(LandlockRuleset, SplitsAroundProtectedPathsAndSkipsSymlinks) {
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  dir.make_dir("ws/.git/hooks");
  dir.make_dir("ws/src");
  dir.make_file("ws/README", "x");
  std::filesystem::create_directory_symlink("/etc", ws + "/etc-link");
  HelperConfig config;
  config.writable = {ws};
  config.read_only = {ws + "/.git", ws + "/.codex"};
  std::vector<LandlockGrant> grants = plan_landlock_grants(config, 3);
  EXPECT_EQ(access_for(grants, ws), 0u) << "the spine directory itself gets nothing";
  EXPECT_EQ(access_for(grants, ws + "/.git"), 0u);
  EXPECT_EQ(access_for(grants, ws + "/.git/hooks"), 0u);
  EXPECT_EQ(access_for(grants, ws + "/etc-link"), 0u) << "symlinks are never followed";
  EXPECT_EQ(access_for(grants, ws + "/src"), landlock::write_rights(3));
  EXPECT_EQ(access_for(grants, ws + "/README"), landlock::write_rights(3) & landlock::kFileOnlyRights);
}

TEST(LandlockRuleset, UnreadablePathsSplitReadsButKeepListing) {
  ScratchDir dir;
  dir.make_file("secret/key", "k");
  dir.make_file("public/file", "p");
  HelperConfig config;
  config.unreadable = {dir.sub("secret")};
  std::vector<LandlockGrant> grants = plan_landlock_grants(config, 3);
  EXPECT_EQ(access_for(grants, "/"), landlock::kReadDir);
  EXPECT_EQ(access_for(grants, dir.sub("secret")), 0u);
  EXPECT_EQ(access_for(grants, dir.sub("public")), landlock::kReadFile | landlock::kExecute);
  EXPECT_EQ(access_for(grants, "/usr"), landlock::kReadFile | landlock::kExecute);
}

TEST(LandlockRuleset, AbiLimitsHandledRights) {
  EXPECT_EQ(landlock::handled_fs_rights(0), 0u);
  EXPECT_EQ(landlock::handled_fs_rights(1) & landlock::kRefer, 0u);
  EXPECT_NE(landlock::handled_fs_rights(2) & landlock::kRefer, 0u);
  EXPECT_EQ(landlock::handled_fs_rights(2) & landlock::kTruncate, 0u);
  EXPECT_NE(landlock::handled_fs_rights(3) & landlock::kTruncate, 0u);
  EXPECT_EQ(landlock::handled_fs_rights(7) & landlock::kIoctlDev, 0u);
}

}  // namespace
}  // namespace codexd::sandbox::linux_backend
