// Starting child processes from a large multi-threaded daemon. LINUX ONLY: the
// implementation (spawn_linux.cc) uses clone(CLONE_VM|CLONE_VFORK), close_range,
// PR_SET_PDEATHSIG and pidfd_open, and is compiled only when building for Linux; another OS
// needs its own spawn_<os>.cc behind this same interface. resolve_executable
// (executable_path.h) is portable and available everywhere.
//
// We clone with CLONE_VM|CLONE_VFORK (what posix_spawn does internally) rather than fork():
// no page-table copy, so the cost does not grow with the daemon's size, and the parent learns
// synchronously whether exec succeeded. posix_spawn itself cannot do what we need between
// fork and exec (controlling TTY, parent-death signal with the ppid race check, dropping to
// another uid with its supplementary groups), so the child step is ours and uses only
// async-signal-safe calls on memory prepared before the clone.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "platform/posix/executable_path.h"  // resolve_executable, part of this interface

namespace codexd::posix {

enum class StdioMode {
  kPipesMerged,    // stdout+stderr on one pipe (unified exec without TTY)
  kPipesSeparate,  // stdout and stderr on separate pipes (classic one-shot exec)
  kPty,            // stdin/stdout/stderr on a new PTY, which becomes the controlling TTY
};

// Who the child runs as (system mode). Absent: the daemon's own credentials.
struct Credentials {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups (initgroups of the user)
};

// A resource limit the child sets on itself before exec (setrlimit).
struct ResourceLimit {
  int resource = 0;  // RLIMIT_*
  uint64_t soft = 0;
  uint64_t hard = 0;
};

struct SpawnRequest {
  std::string executable;         // path passed to execve; resolved beforehand (see resolve_executable)
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // NAME=VALUE: the child's whole environment
  std::string cwd;                // absolute
  StdioMode stdio = StdioMode::kPipesMerged;
  bool stdin_pipe = false;        // pipes only: a writable stdin pipe instead of /dev/null
  unsigned short rows = 24;       // PTY only
  unsigned short cols = 80;
  std::optional<Credentials> credentials;
  int parent_death_signal = SIGTERM;  // 0 disables
  // The executable is a launcher that forwards signals (bwrap + the helper as init): start it
  // with kForwardedSignals ignored (forwarded_signals.h). Its parent-death signal must then be
  // SIGKILL, which it cannot ignore.
  bool ignore_forwarded_signals = false;
  // A descriptor the child gets as kPassedFdNumber (3), close-on-exec cleared; -1: none. Every
  // other descriptor above 2 is closed before exec. The caller keeps ownership.
  int pass_fd = -1;
  // PTY only: a socket pair for the terminal the sandbox makes for itself (runc's "console
  // socket"): its child end becomes kConsoleFdNumber (4), close-on-exec cleared, and the
  // parent's end is SpawnedProcess::console. Over it the sandbox helper sends the master of a
  // PTY it opened in the sandbox's own /dev/pts, so the command's terminal has a name there.
  bool console_socket = false;
  // A descriptor the child gets as kSeccompFdNumber (6), close-on-exec cleared; -1: none (the
  // sandbox's compiled seccomp programs, LaunchPlan::seccomp_program). The caller keeps ownership.
  int program_fd = -1;
  // Linux: open, writable cgroup.procs files. The child writes "0" to each as its first step,
  // so it (and all it will start) is in those groups before it runs anything of the command.
  // The caller owns the descriptors; the child closes them before exec.
  std::vector<int> join_fds;
  std::vector<ResourceLimit> rlimits;  // applied before the credentials switch
  // Linux: the child's /proc/self/oom_score_adj (the daemon protects itself; its children
  // must not inherit that). Absent: inherited.
  std::optional<int> oom_score_adj;
};

inline constexpr int kPassedFdNumber = 3;
inline constexpr int kConsoleFdNumber = 4;
// Not 5: the sandbox's escape tests leak a descriptor there and expect the helper to close it.
inline constexpr int kSeccompFdNumber = 6;

struct SpawnedProcess {
  pid_t pid = -1;      // also the process-group id and session id (the child calls setsid)
  UniqueFd pidfd;      // CLOEXEC; readable when the child exits
  UniqueFd output;     // merged pipe / stdout pipe read end / PTY master (non-blocking)
  UniqueFd error;      // kPipesSeparate: stderr pipe read end (non-blocking)
  UniqueFd input;      // PTY master dup, or stdin pipe write end when stdin_pipe (non-blocking)
  UniqueFd console;    // with console_socket: the parent's end (CLOEXEC, blocking)
};

// Spawns the child. On failure nothing is left running and the Status says which step failed
// ("chdir /x: No such file or directory").
Result<SpawnedProcess> spawn_process(const SpawnRequest& request);

// Signals a whole process group; ESRCH (already gone) is not an error.
Status signal_process_group(pid_t pgid, int signal);

}  // namespace codexd::posix
