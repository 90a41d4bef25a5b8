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

#include <string>
#include <string_view>
#include <vector>

namespace codexd {

std::string shell_quote(std::string_view word);
std::string shell_join(const std::vector<std::string>& argv);

// For protobuf repeated fields and other ranges of strings.
template <typename Range>
std::string shell_join_range(const Range& words) {
  std::string out;
  for (const auto& word : words) {
    if (!out.empty()) out += ' ';
    out += shell_quote(std::string_view(word));
  }
  return out;
}

}  // namespace codexd
