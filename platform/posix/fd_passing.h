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

// The most descriptors one message may carry (a session's spawn: its output, the cgroup.procs
// files of the command and of its shim in every hierarchy, the proxy channel and its relay).
inline constexpr size_t kMaxPassedFds = 16;

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
// The same for a payload of up to `max_payload` bytes (the exec relay's records).
Status send_message_with_fds(int socket, std::string_view payload, const std::vector<int>& fds, size_t max_payload);

struct ReceivedFds {
  std::string payload;
  std::vector<UniqueFd> fds;  // close-on-exec (MSG_CMSG_CLOEXEC)
};
// Receives one message. kUnavailable on EAGAIN (non-blocking socket, nothing yet); kNotFound
// at end of stream (the peer closed without sending); kInvalidArgument when the message or
// its descriptors were truncated (they are closed, never leaked).
Result<ReceivedFds> receive_fds(int socket);

// Receives one whole message of a SOCK_SEQPACKET (or datagram) socket into a buffer of its own
// size: the length is peeked first (MSG_PEEK | MSG_TRUNC), so a 2 KiB message costs 2 KiB, not
// a zeroed buffer of `max_bytes` (a 4 MiB one is about a thousand page faults). kUnavailable on
// EAGAIN, kNotFound at end of stream, kInvalidArgument when the message exceeds `max_bytes`
// (it is then left unread).
Result<std::string> receive_message(int socket, size_t max_bytes);
// receive_message with the message's descriptors, never blocking (kUnavailable when nothing
// waits). A message over `max_bytes` is taken off the socket, its descriptors closed, and
// reported as kInvalidArgument.
Result<ReceivedFds> receive_message_with_fds(int socket, size_t max_bytes);

}  // namespace codexd::posix
