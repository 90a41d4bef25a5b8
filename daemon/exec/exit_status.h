// How a child ended, decoded in one place: from waitid()'s siginfo or a wait() status word,
// with Codex's convention that a command killed by signal N reports exit code 128+N. Also the
// pidfd waits the one-shot runs and sessions share.
//
// Reaping through a pidfd: Asio puts descriptors it watches in non-blocking mode, and
// waitid(P_PIDFD) on a non-blocking pidfd fails with EAGAIN instead of waiting for a child that
// is still dying, which left SIGKILLed sessions as zombies. reap_child() waits for readiness first.
#pragma once

#include <signal.h>

#include <optional>

namespace codexd::exec {

struct ExitStatus {
  int exit_code = -1;         // 128+N when killed by signal N; -1 when not known
  std::optional<int> signal;  // the signal that killed it
  bool core_dumped = false;   // killed by `signal` and dumped core
};

// Codex reports death by signal N as exit code 128+N.
inline constexpr int kSignalExitBase = 128;

// From a siginfo filled by waitid(WEXITED): CLD_EXITED carries the exit code, CLD_KILLED and
// CLD_DUMPED the signal.
ExitStatus exit_status_from(const siginfo_t& info);
// From the status word of wait()/waitpid(). A status that is neither an exit nor a death by
// signal (a stopped child) gives the default ExitStatus (exit_code -1).
ExitStatus exit_status_from_wait_status(int status);

// What a look at the child behind a pidfd found, without reaping it.
struct ExitPeek {
  enum class State {
    kRunning,        // not exited yet
    kExited,         // exited: `status` says how; the zombie is left for reap_child()
    kAlreadyReaped,  // ECHILD: reaped elsewhere, nothing more to learn
    kError,          // waitid failed otherwise (`error` is errno)
  };
  State state = State::kRunning;
  ExitStatus status;
  int error = 0;
};

// waitid(WEXITED | WNOHANG | WNOWAIT): the leader stays a zombie, so its pid (= the
// process-group id) cannot be reused while its group may still be signalled.
ExitPeek peek_exit(int pidfd);

// Blocks until the child behind `pidfd` has exited, then reaps it (ECHILD: already reaped).
void reap_child(int pidfd);

// Reaps the child behind `pidfd` if it has exited, without blocking (EINTR is retried).
void reap_if_exited(int pidfd);

}  // namespace codexd::exec
