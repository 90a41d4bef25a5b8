#include <gtest/gtest.h>

#include "platform/sandbox/sandbox.h"

namespace codexd::sandbox {
namespace {

TEST(DenialHeuristic, NoSandboxOrSuccessIsNeverADenial) {
  EXPECT_FALSE(is_likely_sandbox_denied(Backend::kNone, 1, "Permission denied"));
  EXPECT_FALSE(is_likely_sandbox_denied(Backend::kLinuxBwrap, 0, "Operation not permitted"));
}

TEST(DenialHeuristic, EachKeywordCaseInsensitive) {
  for (const char* text : {"OPERATION NOT PERMITTED", "x: Permission Denied", "Read-only file system",
                           "seccomp", "SandBox", "landlock", "Failed To Write File"}) {
    EXPECT_TRUE(is_likely_sandbox_denied(Backend::kLinuxBwrap, 1, text)) << text;
  }
  EXPECT_FALSE(is_likely_sandbox_denied(Backend::kLinuxBwrap, 1, "no such file or directory"));
}

TEST(DenialHeuristic, KeywordsWinOverQuickRejectCodes) {
  EXPECT_TRUE(is_likely_sandbox_denied(Backend::kLinuxBwrap, 126, "permission denied"));
  EXPECT_TRUE(is_likely_sandbox_denied(Backend::kLinuxLandlock, 2, "Read-only file system"));
}

TEST(DenialHeuristic, QuickRejectCodesWithoutKeywords) {
  for (int code : {2, 126, 127}) EXPECT_FALSE(is_likely_sandbox_denied(Backend::kLinuxBwrap, code, "")) << code;
}

TEST(DenialHeuristic, SigsysOnlyOnLinuxSandboxes) {
  EXPECT_TRUE(is_likely_sandbox_denied(Backend::kLinuxBwrap, 128 + 31, ""));
  EXPECT_TRUE(is_likely_sandbox_denied(Backend::kLinuxLandlock, 159, ""));
  EXPECT_FALSE(is_likely_sandbox_denied(Backend::kMacosSeatbelt, 159, ""));
  EXPECT_FALSE(is_likely_sandbox_denied(Backend::kLinuxBwrap, 1, ""));
  EXPECT_FALSE(is_likely_sandbox_denied(Backend::kLinuxBwrap, 128 + 9, ""));
}

}  // namespace
}  // namespace codexd::sandbox
