// POSIX-shell-like word splitting and quoting with the semantics of Rust's `shlex` crate,
// which Codex uses for match/not_match example strings.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace codexd::policy {

// nullopt on an unterminated quote or a trailing backslash.
std::optional<std::vector<std::string>> shlex_split(const std::string& s);
std::string shlex_quote(const std::string& word);
std::string shlex_join(const std::vector<std::string>& words);

}  // namespace codexd::policy
