// The command most exec tests run: `sh -c SCRIPT` in /, with only PATH set.
#pragma once

#include <string>

#include "daemon/exec/launch_spec.h"
#include "platform/posix/spawn.h"

namespace codexd::testing_util {

// The same as a bare spawn request (pipes merged, stdin on /dev/null).
inline posix::SpawnRequest shell_spawn_request(const std::string& script) {
  posix::SpawnRequest r;
  r.executable = "/bin/sh";
  r.argv = {"sh", "-c", script};
  r.env = {"PATH=/usr/bin:/bin"};
  r.cwd = "/";
  r.stdio = posix::StdioMode::kPipesMerged;
  return r;
}

inline exec::LaunchSpec shell_launch(const std::string& script, bool tty = false) {
  exec::LaunchSpec l;
  l.executable = "/bin/sh";
  l.argv = {"sh", "-c", script};
  l.env = {"PATH=/usr/bin:/bin"};
  l.cwd = "/";
  l.tty = tty;
  return l;
}

}  // namespace codexd::testing_util
