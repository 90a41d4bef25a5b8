#include "platform/linux/helper/run_command.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "platform/linux/helper/console.h"
#include "platform/posix/forwarded_signals.h"

namespace codexd::sandbox::linux_backend {
namespace {

constexpr int kCannotExecute = 126;
constexpr int kCommandNotFound = 127;

void reset_signals_to_default() {
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Puts the calling process's group in the terminal's foreground. A member of a background
// group gets SIGTTOU for this unless it ignores it, so it does for the call.
void take_terminal_foreground() {
  signal(SIGTTOU, SIG_IGN);
  tcsetpgrp(STDIN_FILENO, getpgrp());
  signal(SIGTTOU, SIG_DFL);
}

sigset_t supervised_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  for (int sig : posix::kForwardedSignals) sigaddset(&set, sig);
  return set;
}

[[noreturn]] void exit_like(int status, bool reraise) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  if (reraise && sig != 0) {
    signal(sig, SIG_DFL);
    sigset_t just;
    sigemptyset(&just);
    sigaddset(&just, sig);
    sigprocmask(SIG_UNBLOCK, &just, nullptr);
    raise(sig);
  }
  _exit(128 + sig);
}

}  // namespace

std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/bin:/usr/bin";
  std::string not_executable;
  size_t start = 0;
  for (;;) {
    const size_t end = dirs.find(':', start);
    std::string dir = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
      if (not_executable.empty()) not_executable = candidate;
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return not_executable;
}

void exec_command(const char* program, char* const* argv) {
  if (*program == '\0') {
    errno = ENOENT;
  } else {
    ::execvp(program, argv);
  }
  // Said the way a shell says it, and without naming the sandbox: the daemon's denial
  // heuristic looks for words like "sandbox", and a typo is not a sandbox denial. EACCES keeps
  // its "Permission denied", which may well be the sandbox (Landlock refusing execute).
  int err = errno;
  if (err == ENOENT || err == ENOTDIR) {
    std::fprintf(stderr, "command not found: %s\n", argv[0]);
    _exit(kCommandNotFound);
  }
  std::fprintf(stderr, "cannot execute %s: %s\n", argv[0], std::strerror(err));
  _exit(kCannotExecute);
}

pid_t fork_command(bool own_terminal) {
  // bwrap was started with the forwarded signals ignored; an init needs them delivered.
  // Blocked until the signalfd reads them, so none is lost in between (blocked signals are
  // queued even for pid 1).
  reset_signals_to_default();
  sigset_t waited = supervised_signals();
  sigprocmask(SIG_BLOCK, &waited, nullptr);

  const bool tty = isatty(STDIN_FILENO) == 1;
  pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "codexd-sandbox-helper: fork: %s\n", std::strerror(errno));
    _exit(kCannotExecute);
  }
  if (child == 0) {
    if (own_terminal) {
      become_terminal_session_leader();  // its session is its group: the forwarding below works
    } else {
      setpgid(0, 0);
      if (tty) take_terminal_foreground();
    }
    reset_signals_to_default();
    return 0;
  }
  // Both sides set the group, so neither order of running leaves a window. Not for a session
  // leader to be: setsid() fails for a process that already leads a group.
  if (!own_terminal) {
    setpgid(child, child);
    if (tty) tcsetpgrp(STDIN_FILENO, child);
  }
  return child;
}

void supervise_command(pid_t child, const Supervision& supervision) {
  sigset_t waited = supervised_signals();
  const int signals = signalfd(-1, &waited, SFD_CLOEXEC);
  if (signals < 0) {
    std::fprintf(stderr, "codexd-sandbox-helper: signalfd: %s\n", std::strerror(errno));
    kill(child, SIGKILL);
    _exit(kCannotExecute);
  }
  pollfd watched[3] = {{signals, POLLIN, 0}, {supervision.listener, POLLIN, 0}, {supervision.relay, 0, 0}};
  for (;;) {
    watched[2].events = supervision.relay >= 0 ? supervision.relay_events() : 0;
    watched[2].fd = watched[2].events != 0 ? supervision.relay : -1;
    if (poll(watched, 3, supervision.timeout_ms ? supervision.timeout_ms() : -1) < 0) continue;  // EINTR
    if (watched[2].fd >= 0 && watched[2].revents != 0) supervision.on_relay(watched[2].revents);
    if (supervision.on_timeout) supervision.on_timeout();
    if (watched[1].fd >= 0 && (watched[1].revents & POLLIN) != 0) supervision.serve(watched[1].fd);
    // Hung up: every process under the filter is gone; only the exit is left to wait for.
    if (watched[1].fd >= 0 && (watched[1].revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) watched[1].fd = -1;
    if ((watched[0].revents & POLLIN) == 0) continue;
    signalfd_siginfo info;
    if (read(signals, &info, sizeof info) != static_cast<ssize_t>(sizeof info)) continue;
    const int sig = static_cast<int>(info.ssi_signo);
    if (sig != SIGCHLD) {
      // Before the child's setsid()/setpgid() its group does not exist yet: then to the child.
      if (kill(-child, sig) != 0) kill(child, sig);
      continue;
    }
    int status = 0;
    pid_t reaped;
    while ((reaped = waitpid(-1, &status, WNOHANG)) > 0) {
      if (reaped == child) exit_like(status, supervision.reraise);
    }
  }
}

void run_under_init(const char* program, char* const* argv, bool own_terminal) {
  const pid_t child = fork_command(own_terminal);
  if (child == 0) exec_command(program, argv);
  supervise_command(child, Supervision{});
}

}  // namespace codexd::sandbox::linux_backend
