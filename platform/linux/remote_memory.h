// Reading a string out of another process's memory (/proc/PID/mem): what a seccomp user
// notification's arguments point at. Shared by the daemon's exec supervision and the helper's
// metadata keeper. The caller checks the notification id afterwards (the process may
// have been replaced by another with the same pid while it read).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace codexd::sandbox::linux_backend {

// Reads a NUL-terminated string of at most `limit` bytes at `address` in `pid`, a page at a
// time (a string may end just before unmapped memory). False when unreadable or longer than
// `limit` (then `out` holds the first `limit` bytes).
bool read_remote_string(pid_t pid, uint64_t address, size_t limit, std::string* out);

// Reads the NULL-terminated array of string pointers at `address` (an exec's argv): at most
// `max_words` words and `max_bytes` bytes (then `truncated` is set and what fits is kept).
// False when unreadable.
bool read_remote_argv(pid_t pid, uint64_t address, size_t max_words, size_t max_bytes, std::vector<std::string>* argv,
                      bool* truncated);

}  // namespace codexd::sandbox::linux_backend
