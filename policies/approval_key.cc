#include "policies/approval_key.h"

#include "policies/shell_split.h"

namespace codexd::policy {

std::vector<std::string> canonicalize_command_for_approval(const std::vector<std::string>& argv) {
  auto shell = extract_shell_command(argv);
  if (!shell) return argv;
  auto commands = parse_plain_commands(shell->script);
  if (commands && commands->size() == 1) return commands->front();
  return {"__codex_shell_script__", shell->flag, shell->script};
}

}  // namespace codexd::policy
