// Keys from a raw terminal's input bytes: printable characters (one UTF-8 code point each),
// Enter, Escape, Backspace, the arrows and paging keys (CSI and SS3 forms), Ctrl-C, Ctrl-U.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace codexd::client {

enum class KeyKind { kText, kUp, kDown, kPageUp, kPageDown, kHome, kEnd, kEnter, kEscape, kBackspace, kInterrupt, kKillLine, kOther };

struct Key {
  KeyKind kind = KeyKind::kOther;
  std::string text;  // kText: the character (one code point, or one byte that is not UTF-8)
  bool operator==(const Key&) const = default;
};

// The keys in `bytes`, one read() of a raw terminal. An escape byte alone at the end is the
// Escape key (terminals send a key's whole sequence in one write); one followed by anything
// but `[` or `O` is Escape and then that key.
std::vector<Key> decode_keys(std::string_view bytes);

}  // namespace codexd::client
