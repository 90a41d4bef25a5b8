#include "daemon/server/unix_listener.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <span>
#include <vector>

#include <spdlog/spdlog.h>

#include "daemon/server/log_throttle.h"
#include "platform/posix/fd_util.h"

namespace codexd::server {
namespace {

Result<sockaddr_un> make_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path[0] != '/') return InvalidArgument("socket path must be absolute: " + path);
  if (path.size() >= sizeof addr.sun_path) {
    return InvalidArgument("socket path is too long (" + std::to_string(path.size()) + " bytes, max " +
                           std::to_string(sizeof addr.sun_path - 1) + "): " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// The directory must be ours and private: a directory another user controls could swap the
// socket under us.
Status prepare_directory(const std::string& dir, const SocketOptions& options) {
  if (::mkdir(dir.c_str(), options.dir_mode) != 0 && errno != EEXIST) {
    return ErrnoStatus("creating socket directory " + dir, errno);
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return ErrnoStatus("stat " + dir, errno);
  if (!S_ISDIR(st.st_mode)) return FailedPrecondition("socket directory " + dir + " is not a directory");
  if (st.st_uid != ::geteuid()) {
    return FailedPrecondition("socket directory " + dir + " belongs to uid " + std::to_string(st.st_uid) +
                              ", not to us (uid " + std::to_string(::geteuid()) + ")");
  }
  if (::chmod(dir.c_str(), options.dir_mode) != 0) return ErrnoStatus("chmod " + dir, errno);
  if (options.group && ::chown(dir.c_str(), static_cast<uid_t>(-1), *options.group) != 0) {
    return ErrnoStatus("chown " + dir, errno);
  }
  return Status::Ok();
}

// true: something is listening on `addr`.
bool socket_is_live(const sockaddr_un& addr) {
  UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe) return false;
  return ::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
}

}  // namespace

Result<UniqueFd> open_listening_socket(const SocketOptions& options) {
  CODEXD_ASSIGN_OR_RETURN(sockaddr_un addr, make_address(options.path));
  auto slash = options.path.rfind('/');
  std::string dir = slash == 0 ? "/" : options.path.substr(0, slash);
  if (dir != "/") CODEXD_RETURN_IF_ERROR(prepare_directory(dir, options));

  struct stat st {};
  if (::lstat(options.path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return FailedPrecondition(options.path + " exists and is not a socket; refusing to replace it");
    }
    if (socket_is_live(addr)) {
      return FailedPrecondition("another codexd is already listening on " + options.path);
    }
    spdlog::info("removing stale socket {}", options.path);
    if (::unlink(options.path.c_str()) != 0) return ErrnoStatus("removing stale socket " + options.path, errno);
  }

  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return ErrnoStatus("socket", errno);
  // Create the socket file with the final mode already (no window with a wider one).
  mode_t old_umask = ::umask(0777 & ~options.socket_mode);
  int rc = ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  int bind_errno = errno;
  ::umask(old_umask);
  if (rc != 0) return ErrnoStatus("bind " + options.path, bind_errno);
  if (::chmod(options.path.c_str(), options.socket_mode) != 0) return ErrnoStatus("chmod " + options.path, errno);
  if (options.group && ::chown(options.path.c_str(), static_cast<uid_t>(-1), *options.group) != 0) {
    return ErrnoStatus("chown " + options.path, errno);
  }
  // The largest backlog the kernel allows: with a full backlog a client's non-blocking connect
  // fails with EAGAIN, which gRPC mistakes for "in progress" (then recvmsg: Invalid argument).
  if (::listen(fd.get(), SOMAXCONN) != 0) return ErrnoStatus("listen", errno);
  return fd;
}

Acceptor::Acceptor(UniqueFd listener, PrefaceGateLimits gate_limits, Admit admit, HandOff hand_off)
    : listener_(std::move(listener)),
      gate_(gate_limits),
      admit_(std::move(admit)),
      hand_off_(std::move(hand_off)) {
  auto pipe = posix::make_pipe();
  if (pipe.ok()) {
    wake_read_ = std::move(pipe->read_end);
    wake_write_ = std::move(pipe->write_end);
  }
}

Acceptor::~Acceptor() { stop(); }

void Acceptor::start() { thread_ = std::thread([this] { run(); }); }

void Acceptor::stop() {
  if (stopping_.exchange(true)) {
    if (thread_.joinable()) thread_.join();
    return;
  }
  if (wake_write_) {
    char c = 0;
    (void)!::write(wake_write_.get(), &c, 1);
  }
  if (thread_.joinable()) thread_.join();
  listener_.reset();
}

UniqueFd Acceptor::stop_keeping_listener() {
  if (!stopping_.exchange(true) && wake_write_) {
    char c = 0;
    (void)!::write(wake_write_.get(), &c, 1);
  }
  if (thread_.joinable()) thread_.join();
  return std::move(listener_);  // the accept loop has ended: nobody else reads it
}

void Acceptor::run() {
  std::vector<pollfd> fds;
  while (!stopping_.load()) {
    fds.assign({pollfd{listener_.get(), POLLIN, 0}, pollfd{wake_read_.get(), POLLIN, 0}});
    gate_.append_pollfds(fds);
    int n = ::poll(fds.data(), fds.size(), gate_.next_wakeup_ms(PrefaceGate::Clock::now()));
    if (n < 0) {
      if (errno == EINTR) continue;
      spdlog::error("accept loop: poll failed: {}", std::strerror(errno));
      return;
    }
    if (fds[1].revents != 0 || stopping_.load()) return;
    if (fds[0].revents & POLLIN) accept_one();
    auto polled = std::span<const pollfd>(fds).subspan(2);
    for (auto& ready : gate_.collect(polled, PrefaceGate::Clock::now())) hand_off_(ready.conn.release(), ready.peer);
  }
}

void Acceptor::accept_one() {
  static LogThrottle throttle;  // the acceptor thread is the only caller
  // gRPC expects a non-blocking socket (a blocking one stalls its I/O threads).
  UniqueFd conn(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
  if (!conn) {
    if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) return;
    throttle.warn("accept failed: {}", std::strerror(errno));
    if (errno == EMFILE || errno == ENFILE) ::poll(nullptr, 0, 50);  // let descriptors free up
    return;
  }
  auto peer = posix::peer_credentials(conn.get());
  if (!peer.ok()) {
    throttle.warn("dropping connection: {}", peer.status().message());
    return;
  }
  if (!admit_(conn.get(), *peer)) return;  // closed by UniqueFd
  switch (gate_.add(std::move(conn), *peer, PrefaceGate::Clock::now())) {
    case PrefaceGate::Eviction::kNone: break;
    case PrefaceGate::Eviction::kSameUid:
      throttle.warn("uid {} has {} connections that have not sent the HTTP/2 preface "
                    "(daemon.waiting_connections_per_uid): closed its oldest",
                    peer->uid, gate_.limits().max_waiting_per_uid);
      break;
    case PrefaceGate::Eviction::kOldest:
      throttle.warn("{} connections are waiting for the HTTP/2 preface: closed the oldest",
                    gate_.limits().max_waiting);
      break;
  }
}

}  // namespace codexd::server
