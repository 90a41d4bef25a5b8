// A watcher that outlives the daemon: when every copy of the pipe end this returns is closed
// (the daemon exited, however: SIGKILL, a crash, or a stop), it writes "1" to `kill_file`.
// With the sessions' cgroup v2 `cgroup.kill` as that file, sessions that are not durable die
// with a daemon killed by SIGKILL too: PR_SET_PDEATHSIG reaches only each session's leader,
// and a grandchild in a session of its own, or a leader that ignores SIGTERM, would live on.
//
// The watcher is `/bin/sh` in a session of its own, orphaned at once (not the daemon's child,
// so it never shows among the daemon's children or needs reaping), ignoring the terminal's
// and a stop's signals; it does nothing until end of file on its stdin.
#pragma once

#include <string>

#include "base/status.h"
#include "base/unique_fd.h"

namespace codexd::posix {

// The write end (close-on-exec: no child of the daemon holds it). Keep it open as long as
// the watched processes must live.
Result<UniqueFd> start_death_watch(const std::string& kill_file);

}  // namespace codexd::posix
