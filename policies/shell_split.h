// Recognises the plain-command subset of `bash|zsh|sh -c|-lc SCRIPT`: words (unquoted,
// '...', "..." without expansions, and concatenations of those) joined by && || ; | and
// newlines. Anything else (expansion, substitution, redirection, subshell, &, assignment,
// heredoc, control flow, comments) makes the script opaque: nullopt.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace codexd::policy {

using Argv = std::vector<std::string>;

// [shell, flag, script] when argv is exactly a bash/zsh/sh invocation with -c or -lc.
struct ShellInvocation {
  std::string shell;  // basename: bash, zsh or sh
  std::string flag;   // -c or -lc
  std::string script;
};
std::optional<ShellInvocation> extract_shell_command(const Argv& argv);

// Plain commands of a script in source order, or nullopt when the script is not plain.
std::optional<std::vector<Argv>> parse_plain_commands(const std::string& script);

// The exec-policy variant: additionally tolerates redirections (dropped with their target),
// leading variable assignments (dropped) and comments, so prefix rules can still match
// `gh run view 1 > /tmp/log && echo saved`.
std::optional<std::vector<Argv>> parse_commands_for_exec_policy(const std::string& script);

// parse_plain_commands applied to argv when it is a shell invocation.
std::optional<std::vector<Argv>> plain_commands_of_shell_argv(const Argv& argv);

}  // namespace codexd::policy
