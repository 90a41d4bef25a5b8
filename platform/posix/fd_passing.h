// Passing descriptors over a Unix socket (SCM_RIGHTS): how the sandbox helper hands the
// listening sockets of the proxy ports, opened inside the sandbox's network namespace, to
// the daemon's proxy. Plain POSIX; no allocation beyond the vectors.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace codexd::posix {

// The most descriptors one message may carry.
inline constexpr size_t kMaxPassedFds = 8;

// A SOCK_SEQPACKET socketpair, both ends close-on-exec: one message per sendmsg, so a
// payload and its descriptors always arrive together.
struct SocketPair {
  UniqueFd first;
  UniqueFd second;
};
Result<SocketPair> make_seqpacket_pair();

// Sends `payload` (non-empty, at most 1 KiB) with `fds` (at most kMaxPassedFds) in one
// message. Blocks unless the socket is non-blocking (then kUnavailable on EAGAIN).
Status send_fds(int socket, std::string_view payload, const std::vector<int>& fds);

struct ReceivedFds {
  std::string payload;
  std::vector<UniqueFd> fds;  // close-on-exec (MSG_CMSG_CLOEXEC)
};
// Receives one message. kUnavailable on EAGAIN (non-blocking socket, nothing yet); kNotFound
// at end of stream (the peer closed without sending); kInvalidArgument when the message or
// its descriptors were truncated (they are closed, never leaked).
Result<ReceivedFds> receive_fds(int socket);

}  // namespace codexd::posix
