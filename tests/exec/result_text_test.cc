#include "daemon/exec/result_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "daemon/exec/truncation.h"

namespace codexd::exec {
namespace {

TEST(ResultText, CodexRegexForAnExitedTruncatedResult) {
  std::string output = formatted_truncate_text(std::string(100, 'x'), 5);
  std::string text = render_unified_exec_text({"abc123", 1.25, 0, std::nullopt, 10, output, ""});
  // Upstream context_tests.rs regex.
  std::regex re("^Chunk ID: abc123\nWall time: \\d+\\.\\d{4} seconds\nProcess exited with code 0\nOriginal token count: 10\nOutput:\n[\\s\\S]*tokens truncated[\\s\\S]*$");
  EXPECT_TRUE(std::regex_match(text, re)) << text;
}

TEST(ResultText, RunningSessionExactBytes) {
  EXPECT_EQ(render_unified_exec_text({"f800eb", 1.0024, std::nullopt, 32244, 3, "hi\n", ""}),
            "Chunk ID: f800eb\nWall time: 1.0024 seconds\nProcess running with session ID 32244\n"
            "Original token count: 3\nOutput:\nhi\n");
}

TEST(ResultText, ALimitNoteFollowsTheExitLine) {
  EXPECT_EQ(render_unified_exec_text({"f800eb", 2.0, 137, std::nullopt, 0, "", "killed: memory limit 256 MiB reached"}),
            "Chunk ID: f800eb\nWall time: 2.0000 seconds\nProcess exited with code 137\n"
            "killed: memory limit 256 MiB reached\nOriginal token count: 0\nOutput:\n");
}

TEST(ResultText, SectionsOnlyWhenPresent) {
  EXPECT_EQ(render_unified_exec_text({"", 0.5, std::nullopt, std::nullopt, std::nullopt, "", ""}),
            "Wall time: 0.5000 seconds\nOutput:\n");
}

TEST(ResultText, ChunkIdIsSixLowercaseHex) {
  for (int i = 0; i < 50; ++i) EXPECT_THAT(generate_chunk_id(), testing::MatchesRegex("[0-9a-f]{6}"));
}

TEST(ResultText, ClassicFormat) {
  EXPECT_EQ(render_classic_exec_text(0, 0.04, "hello\n", 10000), "Exit code: 0\nWall time: 0 seconds\nOutput:\nhello\n");
  EXPECT_EQ(render_classic_exec_text(2, 1.26, "x", 10000), "Exit code: 2\nWall time: 1.3 seconds\nOutput:\nx");
  std::string many;
  for (int i = 0; i < 1000; ++i) many += "line " + std::to_string(i) + "\n";
  std::string text = render_classic_exec_text(1, 2.0, many, 10);
  EXPECT_THAT(text, testing::StartsWith("Exit code: 1\nWall time: 2 seconds\nTotal output lines: 1000\nOutput:\n"));
  EXPECT_THAT(text, testing::HasSubstr("tokens truncated"));
}

}  // namespace
}  // namespace codexd::exec
