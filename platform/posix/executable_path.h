// Finding the file a command name stands for, the way execvp would in the child. Portable
// POSIX (used by the spawner and by every sandbox backend's unconfined plans).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace codexd::posix {

// Finds `program` the way execvp would, but in the child's PATH (from `env`; absent: the
// default system PATH), not the daemon's. A name with a slash is returned as is (relative to
// `cwd`). NotFound "command not found: <program>" when no PATH entry holds an executable
// regular file of that name.
Result<std::string> resolve_executable(const std::string& program, const std::vector<std::string>& env,
                                       const std::string& cwd);

}  // namespace codexd::posix
