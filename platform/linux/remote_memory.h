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

#include "base/unique_fd.h"

namespace codexd::sandbox::linux_backend {

// Another process's memory, opened once for several reads (/proc/PID/mem).
class RemoteMemory {
 public:
  explicit RemoteMemory(pid_t pid);
  bool ok() const { return memory_.valid(); }
  // A NUL-terminated string of at most `limit` bytes at `address`, read a page at a time (a
  // string may end just before unmapped memory). False when unreadable or longer than `limit`
  // (then `out` holds the first `limit` bytes).
  bool string_at(uint64_t address, size_t limit, std::string* out) const;
  // The NULL-terminated array of string pointers at `address` (an exec's argv): at most
  // `max_words` words and `max_bytes` bytes (then `truncated` is set and what fits is kept).
  // False when unreadable.
  bool argv_at(uint64_t address, size_t max_words, size_t max_bytes, std::vector<std::string>* argv,
               bool* truncated) const;

 private:
  UniqueFd memory_;
};

// RemoteMemory(pid).string_at(...), for a single read.
bool read_remote_string(pid_t pid, uint64_t address, size_t limit, std::string* out);

}  // namespace codexd::sandbox::linux_backend
