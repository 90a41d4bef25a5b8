// Exec supervision, the daemon's side (docs/sandbox.md "Exec supervision"): a sandbox whose
// plan supervises execs hands the daemon an exec relay, the other end of which its keeper
// holds (Linux: the keeper serves the filter's seccomp listener, platform/sandbox/exec_relay.h).
// Every execve/execveat inside is reported here before it runs and waits for the answer (in
// audit mode for a bounded time: the keeper lets it go on if no daemon answers). What was read about the exec comes from the waiting
// process's memory: another thread of that process can change it after the read (the kernel
// documents this), so an answer is a guard rail inside the sandbox, never a reason to loosen it.
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
  uint64_t id = 0;         // the id of this wait (the keeper's), echoed in the answer
  pid_t pid = 0;           // the process, in the daemon's pid namespace
  pid_t parent_pid = 0;    // its parent's (0 if it could not be read)
  std::string path;        // the program as the process named it, made absolute against its cwd or dirfd
  std::vector<std::string> argv;
  bool argv_truncated = false;  // cut at kMaxRecordArgs words or kMaxRecordArgBytes bytes (exec_relay.h)
  bool readable = true;         // false: the path or argv could not be read (argv is then empty)
  bool by_descriptor = false;   // execveat relative to a descriptor (fexecve, a memfd): `path` is its name
  std::string cwd;         // the process's working directory, as the sandbox sees it
};


// Whether this build can supervise execs at all (Linux); the kernel is probed separately
// (CapabilityReport::exec_supervision).
bool exec_notify_supported();

// Receives the next exec from `relay` (never blocks). kNotFound: the process went away before
// it could be read (nothing to answer); kUnavailable: nothing is waiting; kFailedPrecondition:
// the keeper closed the relay (the sandbox is gone); kInvalidArgument: a malformed record
// (skipped; the next may be fine).
Result<ExecAttempt> receive_exec_attempt(int relay);

// Lets the exec go on (allow) or makes it fail with EACCES. kUnavailable: the keeper is not
// reading (the process keeps waiting).
Status answer_exec_attempt(int relay, uint64_t id, bool allow);

// The parent of `pid` (0 when it is gone or cannot be read).
pid_t parent_pid_of(pid_t pid);

// Writes `line` to the process's standard error when that is a pipe, FIFO or terminal that
// takes it at once (never blocks, never reopens a file the process could not write): how a
// refused exec's reason reaches the session's output. Best effort.
void tell_process(pid_t pid, std::string_view line);

}  // namespace codexd::sandbox
