#include "daemon/exec/result_text.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "daemon/exec/truncation.h"

namespace codexd::exec {

std::string render_unified_exec_text(const UnifiedExecText& parts) {
  std::vector<std::string> sections;
  if (!parts.chunk_id.empty()) sections.push_back("Chunk ID: " + parts.chunk_id);
  char wall[64];
  std::snprintf(wall, sizeof wall, "Wall time: %.4f seconds", parts.wall_time_seconds);
  sections.emplace_back(wall);
  if (parts.exit_code) sections.push_back("Process exited with code " + std::to_string(*parts.exit_code));
  if (!parts.note.empty()) sections.emplace_back(parts.note);
  if (parts.session_id) sections.push_back("Process running with session ID " + std::to_string(*parts.session_id));
  if (parts.original_token_count) {
    sections.push_back("Original token count: " + std::to_string(*parts.original_token_count));
  }
  sections.emplace_back("Output:");
  sections.emplace_back(parts.output);
  std::string out;
  for (size_t i = 0; i < sections.size(); ++i) {
    if (i) out.push_back('\n');
    out += sections[i];
  }
  return out;
}

namespace {

// Rust prints an f32 with Display: the shortest text that round-trips ("1", "0.1", "12.3").
std::string format_tenths(double seconds) {
  double rounded = std::round(seconds * 10.0) / 10.0;
  float value = static_cast<float>(rounded);
  char buf[64];
  if (std::floor(value) == value) {
    std::snprintf(buf, sizeof buf, "%.0f", static_cast<double>(value));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(value));
  }
  return buf;
}

}  // namespace

std::string render_classic_exec_text(int exit_code, double wall_time_seconds, std::string_view content,
                                     uint64_t max_tokens) {
  const uint64_t total_lines = count_lines(content);
  const std::string formatted = truncate_middle_tokens(content, max_tokens);
  std::string out = "Exit code: " + std::to_string(exit_code) + "\n";
  out += "Wall time: " + format_tenths(wall_time_seconds) + " seconds\n";
  if (total_lines != count_lines(formatted)) out += "Total output lines: " + std::to_string(total_lines) + "\n";
  out += "Output:\n";
  out += formatted;
  return out;
}

std::string generate_chunk_id() {
  static thread_local std::mt19937 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::uniform_int_distribution<int> digit(0, 15);
  std::string id(6, '0');
  for (char& c : id) c = kHex[digit(rng)];
  return id;
}

}  // namespace codexd::exec
