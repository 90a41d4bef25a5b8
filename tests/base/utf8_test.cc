#include "base/utf8.h"

#include <gtest/gtest.h>

namespace codexd {
namespace {

TEST(Utf8Lossy, ValidTextUnchanged) {
  EXPECT_EQ(utf8_lossy("héllo \xF0\x9F\x98\x80"), "héllo \xF0\x9F\x98\x80");
}

TEST(Utf8Lossy, MaximalSubpartsBecomeOneReplacementEach) {
  // Examples from the Unicode standard's "U+FFFD substitution of maximal subparts".
  EXPECT_EQ(utf8_lossy("a\xF1\x80\x80" "b"), "a\uFFFDb");          // truncated 4-byte sequence
  EXPECT_EQ(utf8_lossy("\xC0\xAF"), "\uFFFD\uFFFD");               // overlong lead bytes
  EXPECT_EQ(utf8_lossy("\xED\xA0\x80"), "\uFFFD\uFFFD\uFFFD");     // surrogate
  EXPECT_EQ(utf8_lossy("\xE2\x82"), "\uFFFD");                     // cut at the end
  EXPECT_EQ(utf8_lossy("\x80x"), "\uFFFDx");
}

}  // namespace
}  // namespace codexd
