#include "daemon/exec/truncation.h"

#include "base/utf8.h"

namespace codexd::exec {

uint64_t approx_token_count(std::string_view text) { return (static_cast<uint64_t>(text.size()) + 3) / 4; }

uint64_t count_lines(std::string_view text) {
  if (text.empty()) return 0;
  uint64_t newlines = 0;
  for (char c : text) newlines += c == '\n';
  return newlines + (text.back() == '\n' ? 0 : 1);
}

std::string truncate_middle_tokens(std::string_view text, uint64_t max_tokens) {
  if (text.empty()) return {};
  const uint64_t budget = max_tokens * 4;
  const uint64_t removed_tokens_if_cut = (text.size() > budget ? text.size() - budget : 0);
  auto marker = [](uint64_t removed_bytes) {
    return "\xE2\x80\xA6" + std::to_string((removed_bytes + 3) / 4) + " tokens truncated\xE2\x80\xA6";
  };
  if (budget == 0) return marker(text.size());
  if (text.size() <= budget) return std::string(text);

  const uint64_t left_budget = budget / 2;
  const uint64_t right_budget = budget - left_budget;
  const uint64_t tail_start_target = text.size() - right_budget;

  // Prefix: whole chars ending at or before left_budget. Suffix: chars starting at or after
  // tail_start_target.
  size_t prefix_end = 0;
  size_t suffix_start = text.size();
  bool suffix_started = false;
  for (size_t i = 0; i < text.size();) {
    size_t len = utf8_sequence_length(static_cast<unsigned char>(text[i]));
    size_t end = i + len;
    if (end <= left_budget) {
      prefix_end = end;
    } else if (i >= tail_start_target && !suffix_started) {
      suffix_start = i;
      suffix_started = true;
    }
    i = end;
  }
  if (suffix_start < prefix_end) suffix_start = prefix_end;

  std::string out;
  out.append(text.substr(0, prefix_end));
  out.append(marker(removed_tokens_if_cut));
  out.append(text.substr(suffix_start));
  return out;
}

std::string formatted_truncate_text(std::string_view text, uint64_t max_tokens) {
  if (text.size() <= max_tokens * 4) return std::string(text);
  return "Total output lines: " + std::to_string(count_lines(text)) + "\n\n" + truncate_middle_tokens(text, max_tokens);
}

}  // namespace codexd::exec
