#include "base/shell_quote.h"

#include <cstdint>

#include "base/utf8.h"

namespace codexd {
namespace {

bool is_bare_safe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
}

// Length of the byte run at `i` that must be escaped (0: the byte at i can be written as is).
size_t escaped_run_length(std::string_view word, size_t i) {
  size_t start = i;
  while (i < word.size()) {
    auto lead = static_cast<unsigned char>(word[i]);
    size_t len = utf8_sequence_length(lead);
    bool valid = (lead < 0x80 || len > 1) && i + len <= word.size() && is_valid_utf8(word.substr(i, len));
    if (valid) {
      size_t j = i;
      uint32_t cp = next_code_point(word, j);
      if (!is_deceptive_code_point(cp)) break;
    } else {
      len = 1;
    }
    i += len;
  }
  return i - start;
}

void append_octal_escapes(std::string& out, std::string_view bytes) {
  out += "\"$(printf '";
  for (unsigned char b : bytes) {
    out += '\\';
    out += static_cast<char>('0' + ((b >> 6) & 7));
    out += static_cast<char>('0' + ((b >> 3) & 7));
    out += static_cast<char>('0' + (b & 7));
  }
  out += "')\"";
}

}  // namespace

bool is_deceptive_code_point(uint32_t cp) {
  if (cp < 0x20) return cp != '\n';
  if (cp == 0x7F) return true;
  if (cp >= 0x80 && cp <= 0x9F) return true;                         // C1 controls
  if (cp == 0x061C || cp == 0x200E || cp == 0x200F) return true;     // bidi marks
  if (cp >= 0x202A && cp <= 0x202E) return true;                     // bidi embeddings/overrides
  if (cp >= 0x2066 && cp <= 0x2069) return true;                     // bidi isolates
  if (cp == 0x200B || cp == 0x200C || cp == 0x200D || cp == 0x2060 || cp == 0xFEFF) return true;  // zero-width
  return false;
}

std::string shell_quote(std::string_view word) {
  if (word.empty()) return "''";
  bool bare = true;
  for (char c : word) bare = bare && is_bare_safe(c);
  if (bare) return std::string(word);

  std::string out;
  bool quote_open = false;
  auto open = [&] {
    if (!quote_open) out += '\'';
    quote_open = true;
  };
  auto close = [&] {
    if (quote_open) out += '\'';
    quote_open = false;
  };
  size_t i = 0;
  while (i < word.size()) {
    if (size_t run = escaped_run_length(word, i); run > 0) {
      close();
      append_octal_escapes(out, word.substr(i, run));
      i += run;
      continue;
    }
    size_t len = utf8_sequence_length(static_cast<unsigned char>(word[i]));
    if (word[i] == '\'') {
      close();
      out += "\\'";
    } else {
      open();
      out.append(word.substr(i, len));
    }
    i += len;
  }
  close();
  return out;
}

std::string shell_join(const std::vector<std::string>& argv) { return shell_join_range(argv); }

}  // namespace codexd
