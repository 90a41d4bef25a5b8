// The helper's last step: exec the command, either in place (Landlock: the daemon's session
// process becomes the command), under the helper as the sandbox's init (bwrap), or under the
// helper as the metadata keeper (Landlock, helper/metadata_keeper.h).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

namespace codexd::sandbox::linux_backend {

// What execvp would run for `name`: `name` itself when it has a slash, else the first
// executable regular file of that name in $PATH (default "/bin:/usr/bin"), else the first
// non-executable one (so exec says "Permission denied" as execvp would), else "" (not found).
std::string find_program(const std::string& name);

// execvp()s `program` (a bare name is looked up in $PATH; "" is not found) with `argv`; on
// failure says so the way a shell would and _exits 127 (not found) or 126 (cannot execute).
[[noreturn]] void exec_command(const char* program, char* const* argv);

// Forks the command's process. The child returns 0: in a process group of its own (made the
// terminal's foreground group when stdin is a TTY, so Ctrl-C reaches it as in a local
// terminal) or, with `own_terminal` (take_console put the sandbox's PTY on stdin), in a
// session of its own with that PTY as its controlling terminal; signals at their defaults.
// The parent returns the child's pid, with SIGCHLD and kForwardedSignals blocked for
// supervise_command.
pid_t fork_command(bool own_terminal);

// What the parent does besides forwarding signals and reaping: serve a seccomp listener of
// the child's filter (the metadata keeper), and how to end.
struct Supervision {
  int listener = -1;                   // served with `serve` whenever readable; -1: none
  std::function<void(int)> serve;
  // The exec relay (exec supervision): polled for `relay_events()`, handed what came.
  int relay = -1;
  std::function<short()> relay_events;
  std::function<void(short)> on_relay;
  // Waits that end on their own (audit's bounded wait): how long poll may sleep (-1: no
  // limit), and what to do once a wait may have ended.
  std::function<int()> timeout_ms;
  std::function<void()> on_timeout;
  // Die of the signal that killed the command (a plain parent). pid 1 cannot die of a signal it
  // handles, so the init exits 128+N instead.
  bool reraise = false;
};

// Hands every signal of kForwardedSignals it receives to the child's group, reaps every child
// (an init inherits the sandbox's orphans), serves the listener, and exits with the child's
// status as soon as the child exits.
[[noreturn]] void supervise_command(pid_t child, const Supervision& supervision);

// Stays as pid 1 of the sandbox: fork_command, exec the command in the child, and
// supervise_command in the parent. When the command exits, the kernel ends whatever else is
// left in the pid namespace.
[[noreturn]] void run_under_init(const char* program, char* const* argv, bool own_terminal);

}  // namespace codexd::sandbox::linux_backend
