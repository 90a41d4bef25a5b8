// Small file-descriptor helpers.
#pragma once

#include <string>

#include "base/status.h"
#include "base/unique_fd.h"

namespace codexd::posix {

Status set_nonblocking(int fd, bool nonblocking = true);
Status set_cloexec(int fd, bool cloexec = true);

struct PipePair {
  UniqueFd read_end;
  UniqueFd write_end;
};
// pipe2(O_CLOEXEC); both ends close-on-exec.
Result<PipePair> make_pipe();

// Duplicates with F_DUPFD_CLOEXEC.
Result<UniqueFd> dup_cloexec(int fd);

// Closes every descriptor numbered `first` or higher except `keep` (-1: none), with
// close_range(2) where the kernel has it (one call, whatever the fd limit), else one by one up
// to the soft RLIMIT_NOFILE.
void close_descriptors_from(int first, int keep = -1);
// The same, keeping two (either may be -1).
void close_descriptors_from(int first, int keep, int also_keep);

// Writes all of `data`, retrying on EINTR/partial writes (blocking fds only).
Status write_all(int fd, std::string_view data);

}  // namespace codexd::posix
