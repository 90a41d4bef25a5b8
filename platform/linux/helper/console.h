// The session's terminal made inside the sandbox (runc's console socket, the way `docker exec
// -t` gives /dev/pts/0): bwrap's --dev mounts a fresh devpts, in which the host terminal the
// helper was started on does not exist (bwrap binds it on /dev/console, so `tty` said
// /dev/console). The helper opens a PTY there instead and sends its master to the session's
// keeper, which reads and writes the session through it from then on.
#pragma once

#include "base/status.h"

namespace codexd::sandbox::linux_backend {

// Opens /dev/ptmx in the sandbox, copies the current terminal's settings and size (stdin) to
// the new one, sends the master over `console_fd` (SCM_RIGHTS), and puts the slave on 0, 1 and
// 2. Returns true when the sandbox's terminal is in place, false when nobody took the master
// (the socket's other end is closed: the session has no keeper that can) and the host's
// terminal stays. An error is a setup failure: a PTY could not be made in the sandbox.
// Closes `console_fd` either way.
Result<bool> take_console(int console_fd);

// In the command's child, after take_console returned true: its own session with the
// sandbox's terminal (on stdin) as the controlling terminal, so the terminal's signals (^C,
// ^Z, SIGWINCH) reach its foreground job.
void become_terminal_session_leader();

}  // namespace codexd::sandbox::linux_backend
