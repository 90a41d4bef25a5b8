// Exec supervision's messages between a sandbox's keeper and the daemon (docs/sandbox.md §4b).
// The keeper holds the sandbox filter's one seccomp listener (it also performs chmod and chown,
// §4c); for each execve/execveat it reads what the process asks to run and sends the daemon an
// ExecRecord, with the process's pidfd, over a SOCK_SEQPACKET socket; the daemon answers with a
// verdict (in audit mode always "allow", and the keeper stops waiting for it after a while).
// The keeper checks that the wait is still the same before it answers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace codexd::sandbox {

// What the keeper read about one exec. Paths are as the sandbox sees them.
struct ExecRecord {
  uint64_t id = 0;              // the kernel's id of this wait (the keeper's, echoed in the verdict)
  bool readable = true;         // false: the path or argv could not be read (argv is then empty)
  bool argv_truncated = false;  // cut at kMaxRecordArgs words or kMaxRecordArgBytes bytes
  bool by_descriptor = false;   // execveat relative to a descriptor (fexecve, a memfd)
  std::string path;             // made absolute against the cwd or the descriptor
  std::string cwd;
  std::vector<std::string> argv;
};

// Bounds that keep a record inside one datagram (a socket's default send buffer is ~208 KiB).
inline constexpr size_t kMaxRecordArgs = 4096;
inline constexpr size_t kMaxRecordArgBytes = 64 * 1024;
inline constexpr size_t kMaxRecordPath = 4096;
inline constexpr size_t kMaxRecordBytes = 128 * 1024;

std::string encode_exec_record(const ExecRecord& record);
// InvalidArgument naming what is wrong (the bytes come from inside a sandbox).
Result<ExecRecord> parse_exec_record(std::string_view bytes);

struct ExecVerdict {
  uint64_t id = 0;
  bool allow = false;
};
std::string encode_exec_verdict(const ExecVerdict& verdict);
Result<ExecVerdict> parse_exec_verdict(std::string_view bytes);

}  // namespace codexd::sandbox
