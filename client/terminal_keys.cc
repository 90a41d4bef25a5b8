#include "client/terminal_keys.h"

#include "base/utf8.h"

namespace codexd::client {
namespace {

// The key of a CSI sequence's parameters and final byte ("A", "5~", "1;5A").
KeyKind csi_key(std::string_view params, char final_byte) {
  switch (final_byte) {
    case 'A': return KeyKind::kUp;
    case 'B': return KeyKind::kDown;
    case 'H': return KeyKind::kHome;
    case 'F': return KeyKind::kEnd;
    case '~': break;
    default: return KeyKind::kOther;
  }
  if (params == "5") return KeyKind::kPageUp;
  if (params == "6") return KeyKind::kPageDown;
  if (params == "1" || params == "7") return KeyKind::kHome;
  if (params == "4" || params == "8") return KeyKind::kEnd;
  return KeyKind::kOther;
}

// Decodes the escape sequence at bytes[i] (bytes[i] is ESC); advances i past it.
Key escape_sequence(std::string_view bytes, size_t& i) {
  ++i;  // the ESC
  if (i >= bytes.size() || (bytes[i] != '[' && bytes[i] != 'O')) return {KeyKind::kEscape, ""};
  const bool ss3 = bytes[i] == 'O';
  ++i;
  const size_t params_at = i;
  while (i < bytes.size() && !(bytes[i] >= 0x40 && bytes[i] <= 0x7E)) ++i;  // parameter bytes
  if (i >= bytes.size()) return {KeyKind::kOther, ""};                        // cut short
  const char final_byte = bytes[i++];
  if (ss3) return {csi_key("", final_byte), ""};
  return {csi_key(bytes.substr(params_at, i - 1 - params_at), final_byte), ""};
}

Key control_key(unsigned char c) {
  switch (c) {
    case '\r':
    case '\n': return {KeyKind::kEnter, ""};
    case 0x7F:
    case 0x08: return {KeyKind::kBackspace, ""};
    case 0x03: return {KeyKind::kInterrupt, ""};
    case 0x15: return {KeyKind::kKillLine, ""};
    default: return {KeyKind::kOther, ""};
  }
}

}  // namespace

std::vector<Key> decode_keys(std::string_view bytes) {
  std::vector<Key> keys;
  size_t i = 0;
  while (i < bytes.size()) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c == 0x1B) {
      keys.push_back(escape_sequence(bytes, i));
    } else if (c < 0x20 || c == 0x7F) {
      keys.push_back(control_key(c));
      ++i;
    } else {
      size_t len = utf8_sequence_length(c);
      if (i + len > bytes.size() || !is_valid_utf8(bytes.substr(i, len))) len = 1;
      keys.push_back({KeyKind::kText, std::string(bytes.substr(i, len))});
      i += len;
    }
  }
  return keys;
}

}  // namespace codexd::client
