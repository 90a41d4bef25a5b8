// Credentials of the process at the other end of a Unix socket, taken by the kernel at
// connect time (SO_PEERCRED), so a client cannot lie about them.
#pragma once

#include <sys/types.h>

#include "base/status.h"

namespace codexd::posix {

struct PeerCredentials {
  pid_t pid = 0;  // 0 when the peer lives in a pid namespace we cannot see
  uid_t uid = 0;
  gid_t gid = 0;
};

Result<PeerCredentials> peer_credentials(int socket_fd);

}  // namespace codexd::posix
