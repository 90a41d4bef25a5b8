#include "platform/posix/fd_passing.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>

namespace codexd::posix {
namespace {

constexpr size_t kMaxPayload = 1024;

union ControlBuffer {
  char bytes[CMSG_SPACE(sizeof(int) * kMaxPassedFds)];
  cmsghdr align;
};

// Takes ownership of every descriptor in the message's SCM_RIGHTS blocks.
std::vector<UniqueFd> take_fds(msghdr& message) {
  std::vector<UniqueFd> fds;
  for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      fds.emplace_back(fd);
    }
  }
  return fds;
}

// One recvmsg into `buffer`, the descriptors into `out` (owned from here on, closed on every
// error): the bytes received, kUnavailable on EAGAIN, kInvalidArgument when truncated.
Result<size_t> receive_into(int socket, char* buffer, size_t size, int flags, ReceivedFds* out) {
  iovec iov{buffer, size};
  msghdr message{};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  ControlBuffer control{};
  message.msg_control = control.bytes;
  message.msg_controllen = sizeof control.bytes;
  ssize_t n;
  do {
    n = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC | flags);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Unavailable("recvmsg: nothing to read yet");
  if (n < 0) return ErrnoStatus("recvmsg", errno);
  out->fds = take_fds(message);
  if ((message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) return InvalidArgument("message or its descriptors truncated");
  return static_cast<size_t>(n);
}

// The size of the next message, without taking it (0 at end of stream, or for an empty
// message): kUnavailable on EAGAIN.
Result<size_t> peek_message_size(int socket, int flags) {
  ssize_t size;
  do {
    size = ::recv(socket, nullptr, 0, MSG_PEEK | MSG_TRUNC | flags);
  } while (size < 0 && errno == EINTR);
  if (size < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Unavailable("recv: nothing to read yet");
  if (size < 0) return ErrnoStatus("recv", errno);
  return static_cast<size_t>(size);
}

}  // namespace

Result<SocketPair> make_seqpacket_pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    return ErrnoStatus("socketpair(AF_UNIX, SOCK_SEQPACKET)", errno);
  }
  return SocketPair{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

Status send_fds(int socket, std::string_view payload, const std::vector<int>& fds) {
  return send_message_with_fds(socket, payload, fds, kMaxPayload);
}

Status send_message_with_fds(int socket, std::string_view payload, const std::vector<int>& fds, size_t max_payload) {
  if (payload.empty() || payload.size() > max_payload) {
    return InvalidArgument("payload must be 1.." + std::to_string(max_payload) + " bytes");
  }
  if (fds.size() > kMaxPassedFds) return InvalidArgument("too many descriptors in one message");
  iovec iov{const_cast<char*>(payload.data()), payload.size()};
  msghdr message{};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  ControlBuffer control{};
  if (!fds.empty()) {
    message.msg_control = control.bytes;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&message);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ssize_t n;
  do {
    n = ::sendmsg(socket, &message, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Unavailable("sendmsg: would block");
  if (n < 0) return ErrnoStatus("sendmsg", errno);
  if (static_cast<size_t>(n) != payload.size()) return Internal("sendmsg: short write on a seqpacket socket");
  return Status::Ok();
}

Result<ReceivedFds> receive_fds(int socket) {
  char buffer[kMaxPayload + 1];
  ReceivedFds received;
  CODEXD_ASSIGN_OR_RETURN(size_t n, receive_into(socket, buffer, sizeof buffer, 0, &received));
  if (n == 0 && received.fds.empty()) return NotFound("the peer closed the channel without sending");
  if (n > kMaxPayload) return InvalidArgument("message or its descriptors truncated");
  received.payload.assign(buffer, n);
  return received;
}

Result<ReceivedFds> receive_message_with_fds(int socket, size_t max_bytes) {
  CODEXD_ASSIGN_OR_RETURN(size_t size, peek_message_size(socket, MSG_DONTWAIT));
  ReceivedFds received;
  if (size > max_bytes) {
    // Taken off the socket (a datagram too large would otherwise be peeked forever), with
    // whatever descriptors it carried closed.
    char byte;
    (void)receive_into(socket, &byte, 1, MSG_DONTWAIT, &received);
    return InvalidArgument("a message of " + std::to_string(size) + " bytes; at most " + std::to_string(max_bytes) + " expected");
  }
  std::string buffer(size, '\0');
  Result<size_t> n = receive_into(socket, buffer.data(), buffer.size(), MSG_DONTWAIT, &received);
  if (!n.ok()) return n.status();
  if (*n == 0 && received.fds.empty()) return NotFound("the peer closed the channel");
  buffer.resize(*n);
  received.payload = std::move(buffer);
  return received;
}

Result<std::string> receive_message(int socket, size_t max_bytes) {
  CODEXD_ASSIGN_OR_RETURN(size_t size, peek_message_size(socket, 0));
  if (size == 0) return NotFound("the peer closed the channel");
  if (size > max_bytes) {
    return InvalidArgument("a message of " + std::to_string(size) + " bytes; at most " + std::to_string(max_bytes) + " expected");
  }
  std::string buffer(size, '\0');
  ssize_t n;
  do {
    n = ::recv(socket, buffer.data(), buffer.size(), 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return ErrnoStatus("recv", errno);
  if (n == 0) return NotFound("the peer closed the channel");
  buffer.resize(static_cast<size_t>(n));
  return buffer;
}

}  // namespace codexd::posix
