// A child's exit code the way codexd reports one (128+N after signal N), for tests that start
// processes themselves.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>

#include <cerrno>

#include "daemon/exec/exit_status.h"

namespace codexd::testing {

// The exit code in a waitpid() status word.
inline int exit_code_of(int wait_status) { return exec::exit_status_from_wait_status(wait_status).exit_code; }

// Waits for `pid` (EINTR retried) and returns its exit code.
inline int wait_exit_code(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return exit_code_of(status);
}

}  // namespace codexd::testing
