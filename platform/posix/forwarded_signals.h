// The signals a sandbox's init hands on to the command (platform/linux/helper). The launcher
// in front of it (bwrap) is started with exactly these ignored, so that a signal sent to the
// session's process group reaches the command through its init instead of killing bwrap
// (which would SIGKILL everything inside before a trap could run).
#pragma once

#include <signal.h>

#include <array>

namespace codexd::posix {

inline constexpr std::array<int, 7> kForwardedSignals = {SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGTERM, SIGALRM};

}  // namespace codexd::posix
