// Renders argv as text that a POSIX shell (dash, bash, zsh in sh mode) reads back as the very
// same argv, and that is safe to put on a terminal. This is how codexd shows a command to a
// human: the reviewer's `command:` line, `codexctl sessions`, dry-run plans, sandbox plans.
//
//   - a word of only [A-Za-z0-9@%+=:,./_-] (and not empty) is written bare;
//   - anything else is single-quoted; a `'` inside becomes `'\''`;
//   - bytes that would act on the terminal or hide what the word is (C0 controls other than
//     newline, DEL, C1 controls, invalid UTF-8, Unicode bidirectional and zero-width format
//     characters) are never written raw: each run of them becomes "$(printf '\ooo...')",
//     glued to the quoted parts around it, so the shell still sees one word;
//   - a newline stays inside the quotes (a command substitution would drop it at the end).
//
// `policy::shlex_join` stays where Codex's exact output is the contract (execpolicy JSON).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace codexd {

std::string shell_quote(std::string_view word);

// Code points that a terminal acts on or renders misleadingly (C0 controls but newline, DEL,
// C1 controls, bidi and zero-width format characters): what shell_quote never writes raw.
bool is_deceptive_code_point(uint32_t cp);
std::string shell_join(const std::vector<std::string>& argv);

// Each of `words` through `quote` (a function of a std::string_view), joined by spaces.
template <typename Range, typename Quote>
std::string join_quoted(const Range& words, Quote quote) {
  std::string out;
  for (const auto& word : words) {
    if (!out.empty()) out += ' ';
    out += quote(std::string_view(word));
  }
  return out;
}

// For protobuf repeated fields and other ranges of strings.
template <typename Range>
std::string shell_join_range(const Range& words) {
  return join_quoted(words, [](std::string_view word) { return shell_quote(word); });
}

}  // namespace codexd
