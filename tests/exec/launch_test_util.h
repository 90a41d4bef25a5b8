// The command most exec tests run: `sh -c SCRIPT` in /, with only PATH set.
#pragma once

#include <string>

#include "daemon/exec/launch_spec.h"

namespace codexd::testing_util {

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
