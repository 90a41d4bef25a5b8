#include "daemon/exec/truncation.h"

#include <gtest/gtest.h>

namespace codexd::exec {
namespace {

// Upstream vectors (codex-rs truncate_tests.rs).
TEST(Truncation, CodexVectorSingleLine) {
  EXPECT_EQ(formatted_truncate_text("this is an example of a long output that should be truncated", 5),
            "Total output lines: 1\n\nthis is an\u202610 tokens truncated\u2026 truncated");
}

TEST(Truncation, CodexVectorTinyBudget) {
  EXPECT_EQ(formatted_truncate_text("example output", 1), "Total output lines: 1\n\nex\u20263 tokens truncated\u2026ut");
}

TEST(Truncation, CodexVectorUnderBudgetUnchanged) {
  EXPECT_EQ(formatted_truncate_text("example output", 10), "example output");
}

TEST(Truncation, CodexVectorTwoLines) {
  EXPECT_EQ(formatted_truncate_text("this is an example of a long output that should be truncated\nalso some other line", 10),
            "Total output lines: 2\n\nthis is an example o\u202611 tokens truncated\u2026also some other line");
}

TEST(Truncation, CutsOnUtf8Boundaries) {
  // 'é' is two bytes; a cut through it keeps the whole char out of the prefix.
  std::string text = "aé" + std::string(40, 'x') + "éz";
  // 4-byte budget: left 2 bytes ("a", not half of "é"), right 2 bytes ("z": the final "é"
  // starts 3 bytes from the end, so it is cut away whole).
  EXPECT_EQ(truncate_middle_tokens(text, 1), "a\u202611 tokens truncated\u2026z");
}

TEST(Truncation, ZeroBudgetIsOnlyTheMarker) {
  EXPECT_EQ(truncate_middle_tokens("abcdefgh", 0), "\u20262 tokens truncated\u2026");
  EXPECT_EQ(truncate_middle_tokens("", 0), "");
}

TEST(Truncation, TokenAndLineCounts) {
  EXPECT_EQ(approx_token_count(""), 0u);
  EXPECT_EQ(approx_token_count("a"), 1u);
  EXPECT_EQ(approx_token_count("abcd"), 1u);
  EXPECT_EQ(approx_token_count("abcde"), 2u);
  EXPECT_EQ(count_lines(""), 0u);
  EXPECT_EQ(count_lines("a"), 1u);
  EXPECT_EQ(count_lines("a\n"), 1u);
  EXPECT_EQ(count_lines("a\nb"), 2u);
  EXPECT_EQ(count_lines("\n\n"), 2u);
}

}  // namespace
}  // namespace codexd::exec
