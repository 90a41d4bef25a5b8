// UTF-8 helpers for model-visible text.
#pragma once

#include <string>
#include <string_view>

namespace codexd::exec {

// Bytes to valid UTF-8: each maximal invalid subsequence becomes U+FFFD (as Rust's
// String::from_utf8_lossy, which Codex uses on command output).
std::string utf8_lossy(std::string_view bytes);

// Length of the UTF-8 sequence starting with `lead` (1 for invalid lead bytes).
size_t utf8_sequence_length(unsigned char lead);

}  // namespace codexd::exec
