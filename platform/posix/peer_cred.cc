#include "platform/posix/peer_cred.h"

#include <sys/socket.h>

#include <cerrno>

namespace codexd::posix {

Result<PeerCredentials> peer_credentials(int socket_fd) {
#ifdef SO_PEERCRED
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (::getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return ErrnoStatus("getsockopt(SO_PEERCRED)", errno);
  }
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
#else
  uid_t uid;
  gid_t gid;
  if (::getpeereid(socket_fd, &uid, &gid) != 0) return ErrnoStatus("getpeereid", errno);
  return PeerCredentials{0, uid, gid};
#endif
}

}  // namespace codexd::posix
