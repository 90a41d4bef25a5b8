// Lexical path handling for host-executable resolution (no filesystem access, no symlinks).
#pragma once

#include <optional>
#include <string>

#include "base/lexical_path.h"

namespace codexd::policy {

// argv[0] as an absolute normalized path: "~" and "~/..." use home, relative paths join cwd.
std::string resolve_program_path(const std::string& program, const std::string& cwd, const std::string& home);

}  // namespace codexd::policy
