// Raw terminal bytes to keys, as xterm, tmux and the Linux console send them.
#include "client/terminal_keys.h"

#include <gtest/gtest.h>

namespace codexd::client {
namespace {

std::vector<KeyKind> kinds(std::string_view bytes) {
  std::vector<KeyKind> out;
  for (const auto& key : decode_keys(bytes)) out.push_back(key.kind);
  return out;
}

TEST(TerminalKeys, ArrowsAndPagingInCsiAndSs3Forms) {
  EXPECT_EQ(kinds("\x1b[A\x1b[B\x1bOA\x1bOB"), (std::vector{KeyKind::kUp, KeyKind::kDown, KeyKind::kUp, KeyKind::kDown}));
  EXPECT_EQ(kinds("\x1b[5~\x1b[6~\x1b[H\x1b[F\x1b[1~\x1b[4~"),
            (std::vector{KeyKind::kPageUp, KeyKind::kPageDown, KeyKind::kHome, KeyKind::kEnd, KeyKind::kHome, KeyKind::kEnd}));
  EXPECT_EQ(kinds("\x1b[1;5A"), (std::vector{KeyKind::kUp}));
  EXPECT_EQ(kinds("\x1b[2~"), (std::vector{KeyKind::kOther}));
}

TEST(TerminalKeys, EscapeAloneOrBeforeAnotherKey) {
  EXPECT_EQ(kinds("\x1b"), (std::vector{KeyKind::kEscape}));
  const auto keys = decode_keys("\x1bq");
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0].kind, KeyKind::kEscape);
  EXPECT_EQ(keys[1], (Key{KeyKind::kText, "q"}));
}

TEST(TerminalKeys, ControlsAndText) {
  EXPECT_EQ(kinds("\r\n\x7f\x08\x03\x15\x01"), (std::vector{KeyKind::kEnter, KeyKind::kEnter, KeyKind::kBackspace,
                                                           KeyKind::kBackspace, KeyKind::kInterrupt, KeyKind::kKillLine,
                                                           KeyKind::kOther}));
  const auto keys = decode_keys("aé日\xFF");
  ASSERT_EQ(keys.size(), 4u);
  EXPECT_EQ(keys[0].text, "a");
  EXPECT_EQ(keys[1].text, "é");
  EXPECT_EQ(keys[2].text, "日");
  EXPECT_EQ(keys[3].text, "\xFF");
}

}  // namespace
}  // namespace codexd::client
