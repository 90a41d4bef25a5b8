// Lexical path handling for host-executable resolution (no filesystem access, no symlinks).
#pragma once

#include <optional>
#include <string>

namespace codexd::policy {

// Drops "." and empty components, applies "..", removes a trailing "/". "/.." stays "/".
std::string normalize_absolute(const std::string& absolute_path);
// Basename of a normalized absolute path; nullopt for "/".
std::optional<std::string> path_basename(const std::string& normalized);
// argv[0] as an absolute normalized path: "~" and "~/..." use home, relative paths join cwd.
std::string resolve_program_path(const std::string& program, const std::string& cwd, const std::string& home);

}  // namespace codexd::policy
