#include "platform/linux/helper/run_command.h"

#include <signal.h>
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

[[noreturn]] void exit_like(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  _exit(128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0));
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

void run_under_init(const char* program, char* const* argv, bool own_terminal) {
  // bwrap was started with the forwarded signals ignored; an init needs them delivered.
  // Blocked signals are queued even for pid 1, so they wait for sigwaitinfo below.
  reset_signals_to_default();
  sigset_t waited;
  sigemptyset(&waited);
  sigaddset(&waited, SIGCHLD);
  for (int sig : posix::kForwardedSignals) sigaddset(&waited, sig);
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
    exec_command(program, argv);
  }
  // Both sides set the group, so neither order of running leaves a window. Not for a session
  // leader to be: setsid() fails for a process that already leads a group.
  if (!own_terminal) {
    setpgid(child, child);
    if (tty) tcsetpgrp(STDIN_FILENO, child);
  }

  for (;;) {
    siginfo_t info;
    int sig = sigwaitinfo(&waited, &info);
    if (sig < 0) continue;  // EINTR
    if (sig != SIGCHLD) {
      // Before the child's setsid()/setpgid() its group does not exist yet: then to the child.
      if (kill(-child, sig) != 0) kill(child, sig);
      continue;
    }
    int status = 0;
    pid_t reaped;
    while ((reaped = waitpid(-1, &status, WNOHANG)) > 0) {
      if (reaped == child) exit_like(status);
    }
  }
}

}  // namespace codexd::sandbox::linux_backend
