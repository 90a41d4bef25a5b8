// UTF-8 helpers shared by the policy engine, model-visible output and command rendering.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace codexd {

// Length of the UTF-8 sequence starting with `lead`: 2..4 for a valid lead byte (C2..F4),
// 1 for ASCII and for every byte that cannot start a sequence.
size_t utf8_sequence_length(unsigned char lead);

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF).
bool is_valid_utf8(std::string_view s);

// Bytes to valid UTF-8: each maximal invalid subsequence becomes U+FFFD (as Rust's
// String::from_utf8_lossy, which Codex uses on command output).
std::string utf8_lossy(std::string_view bytes);

void append_utf8(std::string& out, uint32_t code_point);

// Decodes the code point at s[i] and advances i (an invalid byte decodes as itself).
uint32_t next_code_point(std::string_view s, size_t& i);

}  // namespace codexd
