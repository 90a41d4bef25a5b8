#include "daemon/exec/exit_status.h"

#include <poll.h>
#include <sys/wait.h>

#include <cerrno>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

namespace codexd::exec {
namespace {

int wait_pidfd(int pidfd, siginfo_t* info, int options) {
  return ::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd), info, options);
}

ExitStatus killed_by(int signal, bool core_dumped) {
  ExitStatus status;
  status.signal = signal;
  status.exit_code = kSignalExitBase + signal;
  status.core_dumped = core_dumped;
  return status;
}

}  // namespace

ExitStatus exit_status_from(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) {
    ExitStatus status;
    status.exit_code = info.si_status;
    return status;
  }
  // CLD_KILLED / CLD_DUMPED
  return killed_by(info.si_status, info.si_code == CLD_DUMPED);
}

ExitStatus exit_status_from_wait_status(int status) {
  if (WIFEXITED(status)) {
    ExitStatus exited;
    exited.exit_code = WEXITSTATUS(status);
    return exited;
  }
  if (WIFSIGNALED(status)) return killed_by(WTERMSIG(status), WCOREDUMP(status));
  return ExitStatus{};
}

ExitPeek peek_exit(int pidfd) {
  ExitPeek peek;
  siginfo_t info{};
  if (wait_pidfd(pidfd, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    peek.error = errno;
    peek.state = peek.error == ECHILD ? ExitPeek::State::kAlreadyReaped : ExitPeek::State::kError;
    return peek;
  }
  if (info.si_pid == 0) return peek;  // kRunning
  peek.state = ExitPeek::State::kExited;
  peek.status = exit_status_from(info);
  return peek;
}

void reap_child(int pidfd) {
  for (;;) {
    siginfo_t info{};
    if (wait_pidfd(pidfd, &info, WEXITED) == 0) return;
    if (errno == EAGAIN) {
      pollfd ready{pidfd, POLLIN, 0};
      ::poll(&ready, 1, -1);
    } else if (errno != EINTR) {
      return;
    }
  }
}

void reap_if_exited(int pidfd) {
  siginfo_t info{};
  while (wait_pidfd(pidfd, &info, WEXITED | WNOHANG) < 0 && errno == EINTR) {
  }
}

}  // namespace codexd::exec
