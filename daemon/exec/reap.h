// Reaping a child through its pidfd. Asio puts descriptors it watches in non-blocking mode, and
// waitid(P_PIDFD) on a non-blocking pidfd fails with EAGAIN instead of waiting for a child that
// is still dying, which left SIGKILLed sessions as zombies. This waits for readiness first.
#pragma once

#include <poll.h>
#include <sys/wait.h>

#include <cerrno>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

namespace codexd::exec {

// Blocks until the child behind `pidfd` has exited, then reaps it (ECHILD: already reaped).
inline void reap_child(int pidfd) {
  for (;;) {
    siginfo_t info{};
    if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd), &info, WEXITED) == 0) return;
    if (errno == EAGAIN) {
      pollfd ready{pidfd, POLLIN, 0};
      ::poll(&ready, 1, -1);
    } else if (errno != EINTR) {
      return;
    }
  }
}

}  // namespace codexd::exec
