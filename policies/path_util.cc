#include "policies/path_util.h"

#include <vector>

namespace codexd::policy {

std::string normalize_absolute(const std::string& path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= path.size()) {
    size_t slash = path.find('/', i);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(i, slash - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(std::move(part));
    }
    i = slash + 1;
  }
  std::string out;
  for (const std::string& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

std::optional<std::string> path_basename(const std::string& normalized) {
  if (normalized == "/") return std::nullopt;
  size_t slash = normalized.rfind('/');
  return normalized.substr(slash + 1);
}

std::string resolve_program_path(const std::string& program, const std::string& cwd, const std::string& home) {
  if (program == "~") return normalize_absolute(home);
  if (program.rfind("~/", 0) == 0) return normalize_absolute(home + "/" + program.substr(2));
  if (!program.empty() && program[0] == '/') return normalize_absolute(program);
  return normalize_absolute(cwd + "/" + program);
}

}  // namespace codexd::policy
