// Following a running session from codexctl: Attach for output, stdin and window size for
// TTY sessions, Ctrl-C forwarded as an interrupt for pipe sessions.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>

#include "client/connection.h"
#include "client/terminal.h"
#include "codexd/v1/exec.grpc.pb.h"

namespace codexd::client {

// Blocks SIGINT and SIGWINCH in the calling thread (call before any thread is created); the
// follower's signal thread takes them with sigwait.
void block_follow_signals();

// While it lives, a thread takes SIGINT and SIGWINCH (blocked by block_follow_signals): Ctrl-C
// interrupts the session, a window change resizes its terminal (`tty`).
class SignalForwarder {
 public:
  SignalForwarder(v1::Exec::Stub& stub, const ClientOptions& options, int session_id, bool tty);
  ~SignalForwarder();
  SignalForwarder(const SignalForwarder&) = delete;
  SignalForwarder& operator=(const SignalForwarder&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// Streams the session's output to stdout until it exits; returns its exit code. With `tty`,
// the local terminal is raw and stdin/window size are forwarded. `reap`: poll once after the
// exit so the daemon forgets the session (it was ours).
int follow_session(const ClientOptions& options, std::shared_ptr<grpc::Channel> channel, int session_id,
                   std::optional<uint64_t> from_offset, bool tty, bool reap, bool lossless = true);

}  // namespace codexd::client
