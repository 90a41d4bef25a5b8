// The helper's last step: exec the command, either in place (Landlock: the daemon's session
// process becomes the command) or under the helper as the sandbox's init (bwrap).
#pragma once

#include <string>

namespace codexd::sandbox::linux_backend {

// What execvp would run for `name`: `name` itself when it has a slash, else the first
// executable regular file of that name in $PATH (default "/bin:/usr/bin"), else the first
// non-executable one (so exec says "Permission denied" as execvp would), else "" (not found).
std::string find_program(const std::string& name);

// execvp()s `program` (a bare name is looked up in $PATH; "" is not found) with `argv`; on
// failure says so the way a shell would and _exits 127 (not found) or 126 (cannot execute).
[[noreturn]] void exec_command(const char* program, char* const* argv);

// Stays as pid 1 of the sandbox: forks the command into its own process group (made the
// terminal's foreground group when stdin is a TTY, so Ctrl-C reaches it as in a local
// terminal), hands every signal of kForwardedSignals it receives to that group, reaps every
// process that ends up orphaned in the sandbox, and _exits with the command's status (128+N
// when a signal killed it: pid 1 cannot die of a signal it handles). Exits at once when the
// command exits; the kernel then ends whatever else is left in the pid namespace.
// `own_terminal` (take_console put the sandbox's PTY on stdin): the command gets its own
// session with that PTY as its controlling terminal instead.
[[noreturn]] void run_under_init(const char* program, char* const* argv, bool own_terminal);

}  // namespace codexd::sandbox::linux_backend
