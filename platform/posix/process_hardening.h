// Hardening the daemon applies to itself before any thread starts (Codex's
// pre_main_hardening): not dumpable (no core files, no ptrace attach by same-uid processes),
// no core dumps, and no dynamic-loader variables left in its own environment.
#pragma once

#include <string>

namespace codexd::posix {

struct HardeningFailure {
  int exit_code = 0;  // 0: success; Codex's codes otherwise (5 prctl, 6 ptrace, 7 setrlimit)
  std::string message;
};

HardeningFailure harden_current_process();

}  // namespace codexd::posix
