// Compiled seccomp programs, passed from the daemon to the helper. The daemon compiles the
// command's filter and (with the metadata keeper) the keeper's once per set of rules
// (seccomp_program_cache.h) into a sealed memfd; the helper reads both from the descriptor
// named by --seccomp-fd, checks them and loads them with seccomp(2): no libseccomp work per
// launch. This part has no libseccomp in it; the helper and the daemon share it.
//
// The memfd holds: the magic "CDXBPF1\0", the command program's instruction count and the
// keeper's (u32 each, native order; the keeper's is 0 without a keeper), then the command's
// sock_filter array and the keeper's. Nothing else: its size is exactly that.
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace codexd::sandbox::linux_backend {

struct SeccompPrograms {
  std::vector<sock_filter> command;
  std::vector<sock_filter> keeper;  // empty without a metadata keeper
};

// The kernel's limit per program (BPF_MAXINSNS).
inline constexpr size_t kMaxSeccompInstructions = 4096;

// The seals a program descriptor must carry: nobody can change it after it was written.
int required_program_seals();

// The memfd's contents for `programs` (command non-empty; each at most kMaxSeccompInstructions).
std::string encode_seccomp_programs(const SeccompPrograms& programs);

// Reads and checks the programs behind `fd` (pread: the descriptor's offset is shared by every
// launch). Refuses anything but a sealed memfd of exactly the encoded size, with a non-empty
// command program, both within kMaxSeccompInstructions, and a keeper program if and only if
// `keeper_expected`. InvalidArgument says what is wrong.
Result<SeccompPrograms> read_seccomp_programs(int fd, bool keeper_expected);

// Loads `program` into the calling thread with seccomp(SECCOMP_SET_MODE_FILTER). Requires
// no_new_privs. With `listener` non-null the filter gets a user-notification listener
// (SECCOMP_FILTER_FLAG_NEW_LISTENER), stored there close-on-exec.
Status load_seccomp_program(const std::vector<sock_filter>& program, UniqueFd* listener = nullptr);

}  // namespace codexd::sandbox::linux_backend
