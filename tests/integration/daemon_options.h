// The daemon configurations the integration tests use.
#pragma once

#include "tests/support/test_daemon.h"

namespace codexd::testing {

// No sandbox: these tests are about the exec core (sessions, signals, output), not bwrap, and
// pids seen by the command are the host's.
inline TestDaemonOptions unsandboxed() {
  TestDaemonOptions options;
  options.sandbox_mode = "danger-full-access";
  return options;
}

}  // namespace codexd::testing
