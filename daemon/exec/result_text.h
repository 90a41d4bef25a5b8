// The model-visible renderings of results, byte for byte as Codex renders its tool results.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace codexd::exec {

// exec_command / write_stdin (Codex's ExecCommandToolOutput::response_text):
//   Chunk ID: abc123 / Wall time: 1.2500 seconds / Process exited with code N |
//   Process running with session ID N / Original token count: N / Output: / <output>
struct UnifiedExecText {
  std::string chunk_id;
  double wall_time_seconds = 0;
  std::optional<int> exit_code;
  std::optional<int> session_id;
  std::optional<uint64_t> original_token_count;
  std::string_view output;  // already truncated
  std::string_view note;    // after the exit line: "killed: memory limit 256 MiB reached" ("" = none)
};
std::string render_unified_exec_text(const UnifiedExecText& parts);

// shell_command (Codex's format_exec_output_for_model_freeform):
//   Exit code: N / Wall time: S seconds (rounded to 0.1) / [Total output lines: L] / Output: / text
// `content` is the aggregated output (with the timeout notice prepended when it timed out).
std::string render_classic_exec_text(int exit_code, double wall_time_seconds, std::string_view content,
                                     uint64_t max_tokens);

// 6 random lowercase hex characters.
std::string generate_chunk_id();

}  // namespace codexd::exec
