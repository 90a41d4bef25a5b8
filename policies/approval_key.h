// The command part of an approval-cache key (Codex's canonicalize_command_for_approval): a shell
// script with exactly one plain command is keyed by that command, any other script by
// ["__codex_shell_script__", flag, script], and everything else by argv unchanged.
#pragma once

#include <string>
#include <vector>

namespace codexd::policy {

std::vector<std::string> canonicalize_command_for_approval(const std::vector<std::string>& argv);

}  // namespace codexd::policy
