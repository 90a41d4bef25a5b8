// Pseudo-terminal pairs for TTY sessions.
#pragma once

#include "base/status.h"
#include "base/unique_fd.h"

namespace codexd::posix {

struct PtyPair {
  UniqueFd master;  // O_CLOEXEC; the daemon reads output from and writes input to it
  UniqueFd slave;   // O_CLOEXEC|O_NOCTTY; becomes the child's stdio and controlling TTY
};

// Opens a PTY pair with the given window size.
Result<PtyPair> open_pty(unsigned short rows, unsigned short cols);

// TIOCSWINSZ on the master; the kernel sends SIGWINCH to the foreground process group.
Status resize_pty(int master_fd, unsigned short rows, unsigned short cols);

// TIOCGWINSZ: the terminal's current size (rows, cols).
Result<std::pair<unsigned short, unsigned short>> pty_size(int master_fd);

}  // namespace codexd::posix
