#include "policies/path_util.h"

namespace codexd::policy {

std::string resolve_program_path(const std::string& program, const std::string& cwd, const std::string& home) {
  if (program == "~") return normalize_lexically(home);
  if (program.rfind("~/", 0) == 0) return normalize_lexically(home + "/" + program.substr(2));
  if (!program.empty() && program[0] == '/') return normalize_lexically(program);
  return normalize_lexically(cwd + "/" + program);
}

}  // namespace codexd::policy
