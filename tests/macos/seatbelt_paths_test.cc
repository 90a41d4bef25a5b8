// Path resolution against a real filesystem: symlinked roots, missing protected paths, and
// protected paths that are themselves symlinks.
#include <gtest/gtest.h>

#include <filesystem>

#include "platform/macos/seatbelt_paths.h"
#include "platform/macos/seatbelt_policy.h"
#include "tests/macos/scratch_dir.h"
#include "tests/macos/seatbelt_test_util.h"

namespace codexd::sandbox::macos_backend::testing {
namespace {

namespace fs = std::filesystem;

std::string resolve_ok(const std::string& path) {
  Result<std::string> resolved = resolve_for_seatbelt(path);
  EXPECT_TRUE(resolved.ok()) << resolved.status().to_string();
  return resolved.ok() ? *resolved : "";
}

TEST(SeatbeltPaths, ResolvesSymlinksAndKeepsTheMissingTail) {
  ScratchDir dir;
  std::string real = dir.make_dir("real");
  fs::create_directory_symlink(real, dir.sub("link"));
  EXPECT_EQ(resolve_ok(dir.sub("link")), real);
  EXPECT_EQ(resolve_ok(dir.sub("link/.codex")), real + "/.codex");
  EXPECT_EQ(resolve_ok(dir.sub("link/a/b/../c")), real + "/a/c");
  EXPECT_EQ(resolve_ok(dir.sub("link//x/./y/")), real + "/x/y");
  EXPECT_EQ(resolve_ok("/"), "/");
  EXPECT_EQ(resolve_ok("/codexd-no-such-top-level-dir/x"), "/codexd-no-such-top-level-dir/x");
}

TEST(SeatbeltPaths, RejectsRelativeAndNulPaths) {
  EXPECT_EQ(resolve_for_seatbelt("relative").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(resolve_for_seatbelt("").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(resolve_for_seatbelt(std::string("/a\0b", 4)).status().code(), StatusCode::kInvalidArgument);
}

TEST(SeatbeltPaths, SymlinkedProtectedPathIsExcludedAsLinkAndAsTarget) {
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  std::string elsewhere = dir.make_dir("elsewhere");
  fs::create_directory_symlink(elsewhere, ws + "/.codex");
  Result<std::vector<std::string>> forms = exclusion_forms(ws + "/.codex", resolve_for_seatbelt);
  ASSERT_TRUE(forms.ok()) << forms.status().to_string();
  EXPECT_EQ(*forms, (std::vector<std::string>{elsewhere, ws + "/.codex"}));

  dir.make_dir("ws/.git");
  forms = exclusion_forms(ws + "/.git", resolve_for_seatbelt);
  ASSERT_TRUE(forms.ok());
  EXPECT_EQ(*forms, std::vector<std::string>{ws + "/.git"}) << "a plain directory has one form";
}

TEST(SeatbeltPaths, GeneratorUsesResolvedPathsByDefault) {
  ScratchDir dir;
  std::string real = dir.make_dir("real-ws");
  fs::create_directory_symlink(real, dir.sub("ws-link"));
  SandboxSpec spec = workspace_spec({{dir.sub("ws-link"), {dir.sub("ws-link/.codex")}}});
  Result<SeatbeltPolicy> policy = build_seatbelt_policy(spec, SeatbeltOptions{});
  ASSERT_TRUE(policy.ok()) << policy.status().to_string();
  EXPECT_EQ(policy->params, (std::vector<SeatbeltParam>{
                                {"WRITABLE_ROOT_0", real},
                                {"WRITABLE_ROOT_0_EXCLUDED_0", real + "/.codex"},
                            }));
  expect_well_formed(*policy);
}

}  // namespace
}  // namespace codexd::sandbox::macos_backend::testing
