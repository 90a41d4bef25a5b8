// Environment variables that change how a program is loaded or how libc behaves before
// main() (LD_PRELOAD, LD_LIBRARY_PATH, GLIBC_TUNABLES, GCONV_PATH, ...). bwrap runs as the
// daemon's user outside the sandbox and the helper runs before its filter, so neither may
// see them: the planner moves them to the helper's --setenv, applied right before exec.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace codexd::sandbox::linux_backend {

bool is_loader_variable(std::string_view name);

struct SplitEnvironment {
  std::vector<std::string> safe;      // passed through bwrap and the helper as is
  std::vector<std::string> deferred;  // applied by the helper after the filter
};

// Also drops any incoming sandbox marker (CODEXD_SANDBOX, CODEX_SANDBOX_NETWORK_DISABLED)
// so a caller cannot spoof them; the planner adds the true ones.
SplitEnvironment split_loader_environment(const std::vector<std::string>& env);

}  // namespace codexd::sandbox::linux_backend
