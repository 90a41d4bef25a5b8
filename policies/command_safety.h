// Known-safe and possibly-dangerous commands (Codex's command_safety heuristics, used for
// commands no rule matched).
#pragma once

#include <string>
#include <vector>

namespace codexd::policy {

// Read-only commands that may run without approval under `untrusted`. A bash/zsh/sh -c|-lc
// script is safe only when it is plain (shell_split.h) and every command in it is safe.
bool is_known_safe_command(const std::vector<std::string>& argv);
// The single-command check (basename of argv[0] and its flags).
bool is_safe_to_call_with_exec(const std::vector<std::string>& argv);
// `rm -f` / `rm -rf` (argv[1] exactly), also behind sudo and inside plain shell scripts.
bool command_might_be_dangerous(const std::vector<std::string>& argv);

}  // namespace codexd::policy
