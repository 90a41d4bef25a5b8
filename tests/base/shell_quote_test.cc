// shell_quote/shell_join: what a reviewer is shown must be what runs. Every case is pasted
// into a real POSIX shell (dash as /bin/sh, and bash) and must come back as the exact argv,
// and the text itself must hold nothing that acts on a terminal.
#include "base/shell_quote.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/utf8.h"
#include "tests/support/shell_read_back.h"

namespace codexd {
namespace {

using codexd::testing::words_read_back_by;

// Nothing a terminal would act on: valid UTF-8, no control byte but newline, no DEL.
void expect_terminal_safe(const std::string& text) {
  EXPECT_TRUE(is_valid_utf8(text)) << text;
  for (unsigned char c : text) {
    EXPECT_TRUE(c == '\n' || (c >= 0x20 && c != 0x7F)) << "raw byte " << int(c) << " in: " << text;
  }
  for (std::string_view bad : {"\u202E", "\u2066", "\u200B", "\xC2\x9B"}) {
    EXPECT_EQ(text.find(bad), std::string::npos) << text;
  }
}

const std::vector<std::vector<std::string>> kArgvCases = {
    {"echo", "it's"},
    {"echo", "say \"hi\""},
    {"echo", "$HOME", "${PATH}", "$(rm -rf /)", "`id`"},
    {"printf", "line1\nline2", "trailing\n", "\n"},
    {"-rf", "--", "-n"},
    {"cat", "bad\xFFutf8", "\xC0\xAF", "\xE2\x82"},
    {"echo", "\x1B[2K\rls", "bell\a", "del\x7F", "tab\there"},
    {"echo", "evil\u202Etxt.exe", "zero\u200Bwidth", "c1\xC2\x9B" "x"},
    {"", "a b", "back\\slash", "semi;colon", "glob*?[x]", "tilde~", "#hash", "amp&", "pipe|", "<>"},
    {"a'b\"c$d\ne\xFF'\x01", "'", "''", "'\n'", "é", "日本語"},
};

TEST(ShellQuote, BareWordsStayBare) {
  EXPECT_EQ(shell_quote("/usr/bin/git"), "/usr/bin/git");
  EXPECT_EQ(shell_quote("--flag=a,b:c@d%e+f"), "--flag=a,b:c@d%e+f");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("é"), "'é'");
  EXPECT_EQ(shell_quote("\x1B"), "\"$(printf '\\033')\"");
  EXPECT_EQ(shell_quote("a\x1B" "b"), "'a'\"$(printf '\\033')\"'b'");
}

TEST(ShellQuote, EveryArgvRoundTripsThroughDashAndBash) {
  for (const auto& argv : kArgvCases) {
    std::string text = shell_join(argv);
    expect_terminal_safe(text);
    EXPECT_EQ(words_read_back_by("/bin/sh", text), argv) << text;
    EXPECT_EQ(words_read_back_by("/bin/bash", text), argv) << text;
  }
}

TEST(ShellQuote, EverySingleByteRoundTrips) {
  std::vector<std::string> argv;
  for (int b = 1; b < 256; ++b) argv.push_back(std::string("x") + static_cast<char>(b) + "y");
  std::string text = shell_join(argv);
  expect_terminal_safe(text);
  EXPECT_EQ(words_read_back_by("/bin/sh", text), argv);
}

}  // namespace
}  // namespace codexd
