#include "daemon/exec/shim_link.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/write.hpp>
#include <chrono>
#include <cstring>

#include "daemon/exec/exit_status.h"
#include "platform/posix/fd_passing.h"
#include "platform/posix/fd_util.h"

namespace codexd::exec {
namespace {

namespace asio = boost::asio;
using shim::Type;

// A shim answers within milliseconds; these bound a stuck or dead one.
constexpr int kSpawnReplyTimeoutMs = 10'000;
constexpr int kStateReplyTimeoutMs = 2'000;

// One message, waiting at most `timeout_ms`. NotFound when the peer closed.
Result<std::string> receive_one(int fd, int timeout_ms, size_t max_bytes) {
  pollfd p{fd, POLLIN, 0};
  int ready = ::poll(&p, 1, timeout_ms);
  if (ready == 0) {
    return Status(StatusCode::kDeadlineExceeded, "the shim did not answer within " + std::to_string(timeout_ms) + " ms");
  }
  if (ready < 0) return ErrnoStatus("poll", errno);
  Result<std::string> message = posix::receive_message(fd, max_bytes);
  if (!message.ok() && message.status().code() == StatusCode::kNotFound) return NotFound("the shim closed the connection");
  return message;
}

// The relay end a shim sends just before its state (kProxyChannel), if the next message is
// one; an invalid fd otherwise, with the message left unread. Called after a poll said readable.
Result<UniqueFd> receive_proxy_channel(int fd) {
  char type = 0;
  if (::recv(fd, &type, 1, MSG_PEEK) != 1 || type != static_cast<char>(Type::kProxyChannel)) return UniqueFd();
  CODEXD_ASSIGN_OR_RETURN(posix::ReceivedFds received, posix::receive_fds(fd));
  if (received.fds.size() != 1) return Internal("the shim sent its proxy channel without a descriptor");
  return std::move(received.fds[0]);
}

bool readable_within(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1;
}

Status send_message(int fd, const std::string& message) {
  if (::send(fd, message.data(), message.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(message.size())) {
    if (errno == EMSGSIZE) return InvalidArgument("the command's argv and environment are too large for the session shim");
    return ErrnoStatus("send to the shim", errno);
  }
  return Status::Ok();
}

}  // namespace

ShimLink::ShimLink(asio::io_context& io, int fd, pid_t pid, UniqueFd shim_pidfd)
    : socket_(io, fd), pid_(pid), shim_pidfd_(std::move(shim_pidfd)) {}

UniqueFd ShimLink::peer_pidfd(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) return UniqueFd();
  return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, cred.pid, 0)));
}

ShimLink::~ShimLink() = default;

Result<std::shared_ptr<ShimLink>> ShimLink::launch(asio::io_context& io, const ShimConfig& config,
                                                   const std::string& session_dir, const posix::SpawnRequest& request,
                                                   size_t attach_window_bytes, const ShimPlacement& placement,
                                                   UniqueFd* proxy_channel) {
  CODEXD_ASSIGN_OR_RETURN(StartedShim shim, start_waiting_shim(config));
  return launch(io, std::move(shim), session_dir, request, attach_window_bytes, placement, proxy_channel);
}

Result<std::shared_ptr<ShimLink>> ShimLink::launch(asio::io_context& io, StartedShim shim,
                                                   const std::string& session_dir, const posix::SpawnRequest& request,
                                                   size_t attach_window_bytes, const ShimPlacement& placement,
                                                   UniqueFd* proxy_channel) {
  posix::SocketPair relay;  // network mode proxy: what the shim forwards the proxy ports to
  const bool relays_proxy = proxy_channel != nullptr && proxy_channel->valid();
  if (relays_proxy) {
    auto made = posix::make_seqpacket_pair();
    if (!made.ok()) {
      end_waiting_shim(std::move(shim));
      return made.status();
    }
    relay = std::move(*made);
  }
  auto fail = [&](Status why) -> Status {
    // It ends by itself once its socket closes or the spawn failed; reap it here.
    end_waiting_shim(std::move(shim));
    return why;
  };

  std::vector<int> fds;
  if (request.pass_fd >= 0) fds.push_back(request.pass_fd);
  if (request.program_fd >= 0) fds.push_back(request.program_fd);
  fds.insert(fds.end(), request.join_fds.begin(), request.join_fds.end());
  if (relays_proxy) {
    fds.push_back(proxy_channel->get());
    fds.push_back(relay.second.get());
  }
  fds.insert(fds.end(), placement.join_fds.begin(), placement.join_fds.end());
  if (fds.size() > posix::kMaxPassedFds) return fail(Internal("too many descriptors for the session shim"));
  if (Status sent = posix::send_fds(shim.control.get(), shim::encode(Type::kSpawnFds), fds); !sent.ok()) return fail(sent);
  relay.second.reset();  // the shim's now: the relay reports EOF when the shim goes
  const std::string spawn_json = shim::spawn_request_json(request, attach_window_bytes, placement.sandboxed, relays_proxy,
                                                         session_dir, placement.join_fds.size());
  if (Status sent = send_message(shim.control.get(), shim::encode(Type::kSpawn, spawn_json)); !sent.ok()) {
    return fail(sent);
  }
  auto reply = receive_one(shim.control.get(), kSpawnReplyTimeoutMs, shim::kMaxMessage);
  if (!reply.ok()) return fail(Unavailable("session shim: " + reply.status().message()));
  const std::string_view message = *reply;
  if (message[0] == static_cast<char>(Type::kSpawnFailed)) return fail(Unavailable(std::string(message.substr(1))));
  if (message[0] != static_cast<char>(Type::kSpawned)) return fail(Internal("session shim: unexpected first message"));
  auto pid = shim::decode_pid(message.substr(1));
  if (!pid.ok()) return fail(pid.status());

  if (relays_proxy) *proxy_channel = std::move(relay.first);  // our copy of the sandbox's end closes
  UniqueFd own_pidfd(::fcntl(shim.pidfd.get(), F_DUPFD_CLOEXEC, 0));
  std::shared_ptr<ShimLink> link(new ShimLink(io, shim.control.release(), *pid, std::move(own_pidfd)));
  // The shim is our child until we go: reap it when it ends, whenever that is.
  auto shim_pidfd = std::make_shared<asio::posix::stream_descriptor>(io, shim.pidfd.release());
  shim_pidfd->async_wait(asio::posix::stream_descriptor::wait_read, [shim_pidfd](const boost::system::error_code& ec) {
    if (!ec) reap_if_exited(shim_pidfd->native_handle());
  });
  return link;
}

Result<std::shared_ptr<ShimLink>> ShimLink::reconnect(asio::io_context& io, const std::string& session_dir,
                                                      shim::ShimState& state, UniqueFd* proxy_channel) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!fd) return ErrnoStatus("socket", errno);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = session_dir + "/shim.sock";
  if (path.size() >= sizeof addr.sun_path) return InvalidArgument("session directory path too long: " + session_dir);
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return ErrnoStatus("no shim answers at " + path, errno);
  }
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != ::geteuid()) {
    return PermissionDenied(path + " is not served by a shim of this daemon's uid");
  }
  CODEXD_RETURN_IF_ERROR(send_message(fd.get(), shim::encode(Type::kHello)));
  // A shim of protocol 2 on that keeps proxy ports sends their relay first; 1 never does.
  UniqueFd relay;
  if (readable_within(fd.get(), kStateReplyTimeoutMs)) {
    CODEXD_ASSIGN_OR_RETURN(relay, receive_proxy_channel(fd.get()));
  }
  auto reply = receive_one(fd.get(), kStateReplyTimeoutMs, shim::kMaxMessage);
  if (!reply.ok()) {
    if (reply.status().code() == StatusCode::kNotFound) {
      return Unavailable("the shim at " + path + " is serving another daemon");
    }
    return reply.status();
  }
  if ((*reply)[0] != static_cast<char>(Type::kState)) return Internal("shim at " + path + " did not send its state");
  CODEXD_ASSIGN_OR_RETURN(state, shim::parse_state(std::string_view(*reply).substr(1)));
  if (state.protocol < shim::kOldestShimProtocol || state.protocol > shim::kShimProtocolVersion) {
    return FailedPrecondition("the shim at " + path + " speaks protocol " + std::to_string(state.protocol) +
                              ", this daemon " + std::to_string(shim::kOldestShimProtocol) + " to " +
                              std::to_string(shim::kShimProtocolVersion));
  }
  if (proxy_channel != nullptr) *proxy_channel = std::move(relay);
  UniqueFd shim_pidfd = peer_pidfd(fd.get());
  return std::shared_ptr<ShimLink>(new ShimLink(io, fd.release(), state.pid, std::move(shim_pidfd)));
}

void ShimLink::start(Handlers handlers) {
  handlers_ = std::move(handlers);
  read_next();
}

void ShimLink::set_paused(bool paused) {
  paused_ = paused;
  if (!paused_) read_next();
}

void ShimLink::read_next() {
  if (closed_ || reading_ || paused_) return;
  reading_ = true;
  socket_.async_wait(asio::posix::stream_descriptor::wait_read, [self = shared_from_this()](const boost::system::error_code& ec) {
    if (self->closed_) {
      self->reading_ = false;
      return;
    }
    if (ec) {
      self->reading_ = false;
      self->lost(ec.message());
      return;
    }
    self->read_ready();  // still `reading_`: no second read starts and overtakes these
    self->reading_ = false;
    self->read_next();
  });
}

// Messages already queued, in this turn: a shim streaming output has several waiting, and
// one wake-up (and one evaluation of the session's waiters) for all of them is cheaper.
void ShimLink::read_ready() {
  constexpr int kMaxMessagesPerTurn = 32;
  for (int i = 0; i < kMaxMessagesPerTurn && !closed_ && !paused_; ++i) {
    const ssize_t n = receive_one_message();
    if (n > 0) continue;
    if (n == -EINTR) continue;
    if (n == -EAGAIN || n == -EWOULDBLOCK) return;  // nothing more now
    lost(n == 0 ? "connection closed" : std::strerror(static_cast<int>(-n)));
    return;
  }
}

ssize_t ShimLink::receive_one_message() {
  const int fd = socket_.native_handle();
  if (!handlers_.prepare_output) {
    if (buffer_.empty()) buffer_.resize(shim::kMaxMessage);  // only without a ring to receive into
    const ssize_t n = ::recv(fd, buffer_.data(), buffer_.size(), MSG_DONTWAIT);
    if (n < 0) return -errno;
    if (n > 0) on_message(std::string_view(buffer_.data(), static_cast<size_t>(n)));
    return n;
  }
  // The header (type and offset of an output message) here, the rest straight into the ring.
  constexpr size_t kHeader = 9;
  char header[kHeader];
  const auto space = handlers_.prepare_output(shim::kMaxMessage);
  iovec iov[3] = {{header, kHeader}, {space[0].data(), space[0].size()}, {space[1].data(), space[1].size()}};
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = space[1].empty() ? 2 : 3;
  const ssize_t n = ::recvmsg(fd, &msg, MSG_DONTWAIT);
  if (n <= 0) {
    const ssize_t result = n < 0 ? -errno : 0;
    handlers_.discard_output();
    return result;
  }
  const size_t total = static_cast<size_t>(n);
  const size_t in_space = total > kHeader ? total - kHeader : 0;
  if (header[0] == static_cast<char>(Type::kOutput) && total >= kHeader) {
    const uint64_t offset = *shim::decode_u64(std::string_view(header + 1, 8));  // 8 bytes: always decodes
    if (handlers_.take_output(offset, in_space)) return n;
  }
  // Anything else: the whole message, copied out of the space before it is given back.
  std::string message(header, std::min(total, kHeader));
  for (const std::span<char>& part : space) {
    const size_t take = std::min(part.size(), total - message.size());
    message.append(part.data(), take);
  }
  handlers_.discard_output();
  on_message(message);
  return n;
}

void ShimLink::on_message(std::string_view message) {
  const std::string_view payload = message.substr(1);
  switch (static_cast<Type>(message[0])) {
    case Type::kOutput: {
      auto data = shim::decode_offset_data(payload);
      if (data.ok() && handlers_.on_output) handlers_.on_output(data->first, data->second);
      break;
    }
    case Type::kOutputClosed:
      if (handlers_.on_output_closed) handlers_.on_output_closed();
      break;
    case Type::kExited: {
      auto status = shim::decode_exit(payload);
      if (status.ok() && handlers_.on_exit) handlers_.on_exit(*status);
      break;
    }
    default: break;  // kSpawned was read by launch(); anything else is ignored
  }
}

void ShimLink::send(std::string message) {
  if (closed_) return;
  outbox_.push_back(std::move(message));
  pump();
}

void ShimLink::pump() {
  if (writing_ || outbox_.empty() || closed_) return;
  writing_ = true;
  asio::async_write(socket_, asio::buffer(outbox_.front()), [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
    self->writing_ = false;
    if (self->outbox_.empty()) return;
    self->outbox_.pop_front();
    if (ec) return;  // the read side reports the loss
    self->pump();
  });
}

void ShimLink::send_input(std::string_view data) {
  while (!data.empty()) {
    const size_t n = std::min(data.size(), shim::kMaxChunk);
    send(shim::encode(Type::kInput, data.substr(0, n)));
    data.remove_prefix(n);
  }
}

void ShimLink::resize(unsigned short rows, unsigned short cols) { send(shim::encode_resize(rows, cols)); }
void ShimLink::delivered(uint64_t offset) { send(shim::encode_u64(Type::kDelivered, offset)); }
void ShimLink::reap() { send(shim::encode(Type::kReap)); }

UniqueFd ShimLink::release() {
  if (closed_) return UniqueFd();
  // Synchronously: the daemon may be shutting down, and the shim must hear it.
  const std::string message = shim::encode(Type::kRelease);
  for (int attempt = 0; attempt < 10; ++attempt) {
    if (::send(socket_.native_handle(), message.data(), message.size(), MSG_NOSIGNAL | MSG_DONTWAIT) >= 0) break;
    if (errno != EAGAIN && errno != EINTR) break;
    pollfd p{socket_.native_handle(), POLLOUT, 0};
    ::poll(&p, 1, 20);  // a full buffer (queued input) drains in microseconds
  }
  detach();
  // A released session may stay in the store for a while (its output re-delivered): it must
  // not keep a descriptor of a shim that is gone. Whoever wants to see the end takes it.
  return std::move(shim_pidfd_);
}

void ShimLink::detach() {
  if (closed_) return;
  closed_ = true;
  outbox_.clear();
  boost::system::error_code ignored;
  socket_.close(ignored);
}

void ShimLink::lost(const std::string& why) {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  socket_.close(ignored);
  // The shim closed its end: it is ending (or ended), and a finished session kept in the store
  // for its output must not hold a descriptor for it. Its reap is the launch's pidfd watch.
  shim_pidfd_.reset();
  if (handlers_.on_lost) handlers_.on_lost(why);
}

}  // namespace codexd::exec
