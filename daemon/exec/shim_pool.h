// Shims started ahead of their sessions. Starting a codexd-shim (clone, exec of a static
// binary, its hardening) costs about as much as spawning the command itself; a shim that is
// already waiting for its spawn request takes that off the path of ExecCommand. A waiting shim
// holds nothing but its control socket: no session directory, no cgroup, no command. It is
// told its session directory and its cgroup with the spawn request, and moves itself there.
// take() is called on the core io thread; the pool starts shims on its own thread.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace codexd::exec {

// Where shims live and what they are.
struct ShimConfig {
  std::string shim_path;     // the codexd-shim executable
  std::string sessions_dir;  // <state_dir>/sessions: one directory per session, 0700
};

// How many shims the daemon keeps waiting for its next durable sessions.
inline constexpr size_t kWaitingShims = 2;

// A codexd-shim process waiting for its spawn request on `control`.
struct StartedShim {
  UniqueFd control;  // the daemon's end of its SOCK_SEQPACKET pair
  UniqueFd pidfd;    // of the shim, our child: reaped through it
  pid_t pid = 0;
};

// Starts one shim (`codexd-shim` with no session directory: the spawn request names it).
Result<StartedShim> start_waiting_shim(const ShimConfig& config);

// Ends a shim that never got a session (it exits when its socket closes) and reaps it; bounded,
// then SIGKILL.
void end_waiting_shim(StartedShim shim);

class ShimPool {
 public:
  // Keeps up to `size` shims waiting (0: none, every take() starts one): the first ones are
  // started here, the later ones on the pool's own thread: a start blocks its caller until the shim has exec'd (vfork), which
  // must never delay the core thread's answers.
  ShimPool(const ShimConfig& config, size_t size);
  // The waiting shims end (their sockets close) and are reaped here.
  ~ShimPool();
  ShimPool(const ShimPool&) = delete;
  ShimPool& operator=(const ShimPool&) = delete;

  // A waiting shim, or a new one started here when none waits; the pool's thread then starts
  // the next.
  Result<StartedShim> take();
  size_t waiting() const;

 private:
  void run();

  const ShimConfig config_;
  const size_t size_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<StartedShim> waiting_;  // under mutex_
  bool stopping_ = false;             // under mutex_
  bool start_failed_ = false;         // under mutex_: stop refilling until a take() starts one itself
  std::thread starter_;
};

}  // namespace codexd::exec
