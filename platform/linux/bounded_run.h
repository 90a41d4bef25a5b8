// Runs a short probe command (bwrap --version, the user-namespace test, the helper
// self-test) with a hard deadline: output captured up to a cap, the process group killed
// when the deadline passes. Spawns with posix_spawn; nothing runs between fork and exec.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/status.h"

namespace codexd::sandbox::linux_backend {

struct BoundedRunResult {
  bool timed_out = false;
  int exit_code = -1;    // -1 when killed by a signal or timed out
  int term_signal = 0;
  std::string output;    // stdout and stderr interleaved, at most max_output bytes
};

Result<BoundedRunResult> run_bounded(const std::vector<std::string>& argv,
                                     std::chrono::steady_clock::time_point deadline,
                                     size_t max_output = 64 * 1024);

}  // namespace codexd::sandbox::linux_backend
