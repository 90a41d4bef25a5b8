// Codex's output truncation for the model: tokens are estimated as bytes/4, and output over
// the budget keeps its beginning and end with a "…N tokens truncated…" marker in the middle.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace codexd::exec {

inline constexpr uint32_t kDefaultMaxOutputTokens = 10'000;

// ceil(bytes / 4)
uint64_t approx_token_count(std::string_view text);

// Rust's str::lines().count(): a trailing newline does not start another line.
uint64_t count_lines(std::string_view text);

// Middle truncation to `max_tokens` (bytes budget 4*max_tokens) on UTF-8 char boundaries.
// `text` must be valid UTF-8.
std::string truncate_middle_tokens(std::string_view text, uint64_t max_tokens);

// "Total output lines: L\n\n" + truncate_middle_tokens(...) when over budget; else unchanged.
std::string formatted_truncate_text(std::string_view text, uint64_t max_tokens);

}  // namespace codexd::exec
