// Exec supervision, the OS side (docs/sandbox.md "Exec supervision"): a sandbox whose plan
// supervises execs hands the daemon a listener (Linux: the seccomp user-notification
// descriptor of its filter); every execve/execveat inside then waits until the daemon has
// received it here and answered. What is read about the exec comes from the waiting process's
// memory: another thread of that process can change it after the read (the kernel documents
// this), so an answer is a guard rail inside the sandbox, never a reason to loosen it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace codexd::sandbox {

// One exec waiting for its answer.
struct ExecAttempt {
  uint64_t id = 0;         // the kernel's id of this wait
  pid_t pid = 0;           // the process, in the daemon's pid namespace
  pid_t parent_pid = 0;    // its parent's (0 if it could not be read)
  std::string path;        // the program as the process named it, made absolute against its cwd or dirfd
  std::vector<std::string> argv;
  bool argv_truncated = false;  // more than kMaxExecArgs words or kMaxExecArgBytes bytes
  bool readable = true;         // false: the path or argv could not be read (argv is then empty)
  bool by_descriptor = false;   // execveat relative to a descriptor (fexecve, a memfd): `path` is its name
  std::string cwd;         // the process's working directory, as the sandbox sees it
};

inline constexpr size_t kMaxExecArgs = 4096;
inline constexpr size_t kMaxExecArgBytes = 256 * 1024;

// Whether this build can supervise execs at all (Linux); the kernel is probed separately
// (CapabilityReport::exec_supervision).
bool exec_notify_supported();

// Receives the next waiting exec from `listener` (call when it is readable). kNotFound: the
// process went away before it could be read (nothing to answer); kUnavailable: nothing is
// waiting; other errors: the listener is unusable.
Result<ExecAttempt> receive_exec_attempt(int listener);

// Lets the exec go on (allow) or makes it fail with EACCES. kNotFound: the process no longer
// waits (killed meanwhile).
Status answer_exec_attempt(int listener, uint64_t id, bool allow);

// The parent of `pid` (0 when it is gone or cannot be read).
pid_t parent_pid_of(pid_t pid);

// Writes `line` to the process's standard error when that is a pipe, FIFO or terminal that
// takes it at once (never blocks, never reopens a file the process could not write): how a
// refused exec's reason reaches the session's output. Best effort.
void tell_process(pid_t pid, std::string_view line);

}  // namespace codexd::sandbox
