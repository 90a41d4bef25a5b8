// Small UTF-8 helpers (strings are UTF-8 byte strings; indexing is by byte as in starlark-rust's
// ASCII fast path is not assumed: len() and indexing count code points).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace codexd::starlark {

void append_utf8(std::string& out, uint32_t code_point);
// Length of the sequence introduced by a lead byte (1 for invalid bytes).
uint32_t utf8_sequence_length(unsigned char lead);
bool is_valid_utf8(std::string_view s);
// Decodes the code point at s[i] and advances i (invalid bytes decode as themselves).
uint32_t next_code_point(std::string_view s, size_t& i);
std::vector<uint32_t> code_points(std::string_view s);
size_t code_point_count(std::string_view s);

}  // namespace codexd::starlark
