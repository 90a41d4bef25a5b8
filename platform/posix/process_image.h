// Replacing the running process with a new program image while keeping one descriptor: how
// the daemon restarts in place (same pid, same listening socket) without a gap in accepting.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace codexd::posix {

// The binary this process runs, as a path that names the file on disk now: readlink of
// /proc/self/exe (Linux) taken at start-up, before a package upgrade can replace it (after
// the replacement the link reads "<path> (deleted)" and names the old inode). "" if unknown.
std::string current_executable_path();

// One of codexd's own programs (codexd-shim, codexd-sandbox-helper) that the running binary
// starts: installed, they live in <bindir>/../libexec/codexd (the package keeps programs that
// no person runs out of $PATH); in a build tree, next to the binary. The first of the two that
// exists, else the build-tree path (whose absence the caller reports).
std::string companion_program_path(const std::string& name);

// Whether `path` is a regular file this process may execute; InvalidArgument saying why not.
Status check_executable(const std::string& path);

// Moves `keep_fd` to descriptor `keep_as` (without close-on-exec), closes every descriptor
// above it, sets `env` (NAME, VALUE pairs) and execs `executable` with `argv`. Returns only on
// failure, with the exec error; by then the other descriptors are closed, so the caller can
// only report and exit.
Status replace_process_image(const std::string& executable, const std::vector<std::string>& argv, int keep_fd,
                             int keep_as, const std::vector<std::pair<std::string, std::string>>& env);

// True when `fd` is a listening AF_UNIX stream socket (what a restart hands over).
bool is_listening_unix_socket(int fd);

}  // namespace codexd::posix
