// codexd-shim: the keeper of one session (docs/architecture.md, "Durable sessions").
//
// codexd starts one shim per session and hands it the spawn request; the shim starts the
// command as its own child, holds the PTY master or pipes, keeps the newest output in a ring
// addressed by stream offset, and records the exit. codexd talks to it over a SOCK_SEQPACKET
// socket (daemon/exec/shim_protocol.h). When codexd goes away (restart, upgrade, crash) the
// shim keeps the command running and its output bounded, and waits on a listening socket in
// the session's state directory for the next codexd to reconnect. One daemon at a time: a
// second connection while one is active is closed at once.
#pragma once

#include <string>

namespace codexd::shim {

struct ShimOptions {
  std::string session_dir;  // <state_dir>/sessions/<id>: the listening socket lives here
  int control_fd = 3;       // the first daemon's end of the socketpair
};

// Runs the shim to the end; returns the process exit code.
int run_shim(const ShimOptions& options);

}  // namespace codexd::shim
