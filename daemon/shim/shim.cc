#include "daemon/shim/shim.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/write.hpp>
#include <algorithm>
#include <array>
#include <cerrno>
#include <deque>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "daemon/exec/exit_status.h"
#include "daemon/exec/output_ring.h"
#include "daemon/exec/shim_protocol.h"
#include "platform/posix/fd_passing.h"
#include "platform/posix/fd_util.h"
#include "platform/posix/pty.h"
#include "platform/posix/spawn.h"

namespace codexd::shim {
namespace {

namespace asio = boost::asio;
namespace proto = exec::shim;
using proto::Type;

constexpr const char* kSocketName = "shim.sock";

// ---- start-up steps ---------------------------------------------------------------------------

// No core files (the ring holds the command's output), not dumpable, stdio on /dev/null (the
// daemon that started us may be gone), its own session (a signal to the daemon's process
// group is not ours), every descriptor but the control socket closed.
bool harden_and_detach(int control_fd) {
  rlimit none{0, 0};
  if (::setrlimit(RLIMIT_CORE, &none) != 0) return false;
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return false;
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) return false;
  for (int fd = 0; fd <= 2; ++fd) ::dup2(null, fd);
  if (null > 2) ::close(null);
  ::setsid();
  posix::close_descriptors_from(3, control_fd);
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGINT, SIG_IGN);
  return true;
}

// A sandboxed session's shim takes no_new_privs: its command gets it in the sandbox anyway,
// and nothing the shim (or a compromised shim) execs can gain privileges. Not for an
// unsandboxed session, whose command may rightly need a set-id program (sudo), nor where the
// command's first executable is itself set-id (a setuid-root bwrap would lose its setuid).
Status take_no_new_privs(const proto::DecodedSpawn& spawn) {
  if (!spawn.sandboxed) return Status::Ok();
  struct stat st {};
  if (::stat(spawn.request.executable.c_str(), &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)) != 0) {
    return Status::Ok();
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return ErrnoStatus("PR_SET_NO_NEW_PRIVS", errno);
  return Status::Ok();
}

// Moves this (single-threaded) process into the cgroup whose cgroup.procs `fd` is: "0" is the
// writer itself.
Status join_cgroup(int fd) {
  ssize_t n;
  do {
    n = ::write(fd, "0", 1);
  } while (n < 0 && errno == EINTR);
  if (n != 1) return ErrnoStatus("write cgroup.procs", errno);
  return Status::Ok();
}

// The socket a later daemon connects to: <session_dir>/shim.sock, 0600, only our uid.
UniqueFd listen_in(const std::string& dir) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return {};
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = dir + "/" + kSocketName;
  if (path.size() >= sizeof addr.sun_path) return {};
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  ::unlink(path.c_str());
  const mode_t old = ::umask(0177);
  const int bound = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::umask(old);
  if (bound != 0 || ::listen(fd.get(), 4) != 0) return {};
  return fd;
}

// The spawn request: first its descriptors, then the JSON (blocking; the daemon sends both
// right after starting us).
struct Received {
  proto::DecodedSpawn spawn;
  std::vector<UniqueFd> fds;
};
Result<Received> receive_spawn(int control_fd) {
  CODEXD_ASSIGN_OR_RETURN(posix::ReceivedFds fds, posix::receive_fds(control_fd));
  if (fds.payload.empty() || fds.payload[0] != static_cast<char>(Type::kSpawnFds)) {
    return InvalidArgument("expected the spawn descriptors first");
  }
  Result<std::string> message = posix::receive_message(control_fd, proto::kMaxSpawnMessage);
  if (!message.ok()) return InvalidArgument("no spawn request: " + message.status().message());
  const std::string& buffer = *message;
  if (buffer[0] != static_cast<char>(Type::kSpawn)) return InvalidArgument("expected a spawn request");
  CODEXD_ASSIGN_OR_RETURN(proto::DecodedSpawn spawn, proto::parse_spawn_request(std::string_view(buffer).substr(1)));
  if (fds.fds.size() !=
      spawn.join_fd_count + (spawn.has_pass_fd ? 1 : 0) + (spawn.has_program_fd ? 1 : 0) + (spawn.relays_proxy ? 2 : 0) +
          spawn.shim_join_fd_count) {
    return InvalidArgument("spawn request and descriptors do not match");
  }
  return Received{std::move(spawn), std::move(fds.fds)};
}

// ---- the running shim ------------------------------------------------------------------------

// Whether the other end of a connected socket has closed (what it sent may still be unread).
bool peer_has_closed(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP)) != 0;
}

class Keeper {
 public:
  Keeper(asio::io_context& io, std::string dir, posix::SpawnedProcess process, size_t window, bool input_open, bool pty)
      : io_(io),
        is_pty_(pty),
        dir_(std::move(dir)),
        pid_(process.pid),
        pidfd_(io, process.pidfd.release()),
        output_(io, process.output.release()),
        input_(io),
        control_(io),
        listener_(io),
        proxy_channel_(io),
        console_(io),
        // The command's output is read straight into the ring, into the slack past the
        // retained window (so a read in flight never overwrites a byte still to be sent or
        // replayed), and sent straight from it.
        ring_(std::max(window, 4 * proto::kMaxChunk), proto::kMaxChunk) {
    if (process.input.valid() && input_open) input_.assign(process.input.release());
    if (process.console.valid()) {
      posix::set_nonblocking(process.console.get()).ok();
      console_.assign(process.console.release());
      console_pending_ = true;
    }
  }

  // `proxy_channel` and `relay` (network mode proxy, else invalid): the sandbox's proxy channel
  // and the first daemon's end to relay the proxy ports to.
  void start(UniqueFd control, UniqueFd listener, UniqueFd proxy_channel, UniqueFd relay) {
    listener_.assign(listener.release());
    connect(std::move(control), false);
    send(proto::encode_pid(pid_));
    if (proxy_channel) {
      proxy_channel_.assign(proxy_channel.release());
      relay_ = std::move(relay);
      keeps_proxy_ = true;
      receive_proxy_ports();
    }
    watch_exit();
    if (console_pending_) receive_console();
    read_output();
    accept_next();
  }

  bool done() const { return released_; }

 private:
  // -- the daemon connection --
  // The first daemon has seen nothing yet; a reconnecting one says kHello and gets the state
  // before any output.
  void connect(UniqueFd fd, bool reconnect) {
    control_.assign(fd.release());
    connected_ = true;
    write_failed_ = false;
    reset_seen_ = false;
    awaiting_hello_ = reconnect;
    sent_ = ring_.end_offset();
    read_control();
  }

  void disconnect() {
    boost::system::error_code ignored;
    control_.close(ignored);
    relay_.reset();  // nobody reads it any more
    connected_ = false;
    outbox_.clear();
    after_output_.clear();
    waiting_writable_ = false;
    ++connection_;
    if (waiting_peer_ && !released_) {
      connect(std::move(waiting_peer_), true);
      return;
    }
    read_output();  // no daemon to wait for: keep reading, the ring bounds what is kept
  }

  void accept_next() {
    listener_.async_wait(asio::posix::stream_descriptor::wait_read, [this](const boost::system::error_code& ec) {
      if (ec) return;
      UniqueFd peer(::accept4(listener_.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
      if (peer) {
        ucred cred{};
        socklen_t len = sizeof cred;
        const bool same_uid = ::getsockopt(peer.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == ::geteuid();
        // One daemon at a time, and only ours. A daemon that died a moment ago (SIGKILL, then
        // a restart) may still look connected: its end is closed but this loop has not read
        // the end yet. The newcomer waits for that instead of being turned away.
        if (same_uid && !connected_) {
          connect(std::move(peer), true);
        } else if (same_uid && peer_has_closed(control_.native_handle())) {
          waiting_peer_ = std::move(peer);
        }
      }
      accept_next();
    });
  }

  void read_control() {
    control_.async_read_some(asio::buffer(control_buffer_), [this](const boost::system::error_code& ec, size_t n) {
      if (ec == asio::error::connection_reset && !reset_seen_) {
        // The daemon closed while output it had not read was queued for it. The kernel reports
        // that once, before the messages the daemon sent before closing (a kRelease at
        // shutdown): read on, they are still there, then the end.
        reset_seen_ = true;
        read_control();
        return;
      }
      if (ec || n == 0) {
        if (ec != asio::error::operation_aborted) disconnect();
        return;
      }
      on_control(std::string_view(control_buffer_.data(), n));
      if (connected_ && !released_) read_control();
    });
  }

  void on_control(std::string_view message) {
    const Type type = static_cast<Type>(message[0]);
    const std::string_view payload = message.substr(1);
    switch (type) {
      case Type::kHello:
        awaiting_hello_ = false;
        offer_proxy_relay();
        send_state();
        break;
      case Type::kInput: write_input(std::string(payload)); break;
      case Type::kResize: {
        auto size = proto::decode_resize(payload);
        if (size.ok() && output_.is_open()) posix::resize_pty(output_.native_handle(), size->first, size->second).ok();
        break;
      }
      case Type::kDelivered: {
        auto offset = proto::decode_u64(payload);
        if (offset.ok()) delivered_ = std::max(delivered_, *offset);
        break;
      }
      case Type::kReap: reap(); break;
      case Type::kRelease: release(); break;
      default: break;  // unknown from a newer daemon: ignored
    }
  }

  // After kHello: the state, then every byte still held, then live output.
  void send_state() {
    proto::ShimState state;
    state.pid = pid_;
    state.begin_offset = ring_.begin_offset();
    state.end_offset = ring_.end_offset();
    state.delivered_offset = delivered_;
    state.output_closed = output_closed_;
    state.input_open = input_.is_open();
    state.reaped = reaped_;
    state.exit = exit_;
    if (is_pty_ && output_.is_open()) {
      if (auto size = posix::pty_size(output_.native_handle()); size.ok()) std::tie(state.rows, state.cols) = *size;
    }
    // Output from the state's begin_offset on, whatever arrived since the connection was
    // accepted: sending the state pumps the ring too, so where it starts is set first (output
    // read between accept and kHello once went out from the accept's offset, and the daemon
    // took the bytes before it for lost).
    sent_ = ring_.begin_offset();
    send(proto::encode(Type::kState, proto::state_json(state)));
    flush_ring();
    if (output_closed_) send_after_output(proto::encode(Type::kOutputClosed));
    if (exit_) send_after_output(proto::encode_exit(*exit_));
  }

  void send(std::string message) {
    if (!connected_ || awaiting_hello_ || write_failed_) return;
    outbox_.push_back(std::move(message));
    pump();
  }

  void send_after_output(std::string message) {
    if (!connected_ || awaiting_hello_ || write_failed_) return;
    after_output_.push_back(std::move(message));
    pump();
  }

  void flush_ring() { pump(); }

  // Sends what is due, in order: queued messages (the pid, the state), then the output the
  // daemon has not had, in chunks sent straight from the ring (no copy: sendmsg gathers the
  // header and the ring's bytes into one message), then "output closed" and the exit. Each
  // send is non-blocking; a full socket waits for room. While a daemon is connected nothing
  // it has not had is overwritten (the reader waits: back-pressure).
  void pump() {
    if (waiting_writable_ || !connected_ || awaiting_hello_ || write_failed_) return;
    const int fd = control_.native_handle();
    while (true) {
      ssize_t sent;
      if (!outbox_.empty()) {
        sent = ::send(fd, outbox_.front().data(), outbox_.front().size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        if (sent >= 0) {
          outbox_.pop_front();
          continue;
        }
      } else if (sent_ < ring_.end_offset()) {
        if (sent_ < ring_.begin_offset()) sent_ = ring_.begin_offset();
        const size_t n = static_cast<size_t>(std::min<uint64_t>(ring_.end_offset() - sent_, proto::kMaxChunk));
        const std::string header = proto::encode_offset_data(Type::kOutput, sent_, std::string_view());
        const auto parts = ring_.spans(sent_, n);
        iovec iov[3] = {{const_cast<char*>(header.data()), header.size()},
                        {const_cast<char*>(parts[0].data()), parts[0].size()},
                        {const_cast<char*>(parts[1].data()), parts[1].size()}};
        msghdr msg{};
        msg.msg_iov = iov;
        msg.msg_iovlen = parts[1].empty() ? 2 : 3;
        sent = ::sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (sent >= 0) {
          sent_ += n;
          read_output();  // room again for output the daemon has not had
          continue;
        }
      } else if (!after_output_.empty()) {
        // Every byte is out: "output closed" and the exit follow it.
        while (!after_output_.empty()) {
          outbox_.push_back(std::move(after_output_.front()));
          after_output_.pop_front();
        }
        continue;
      } else {
        return;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        waiting_writable_ = true;
        control_.async_wait(asio::posix::stream_descriptor::wait_write,
                            [this, connection = connection_](const boost::system::error_code& ec) {
                              if (connection != connection_) return;  // an earlier daemon's
                              waiting_writable_ = false;
                              if (!ec) pump();
                            });
        return;
      }
      // The daemon closed its end. What it sent before closing (a kRelease at shutdown) is
      // still queued for reading: disconnecting here would discard it and leave the command
      // running for a daemon that said it was done. The read side sees the end and disconnects.
      outbox_.clear();
      after_output_.clear();
      write_failed_ = true;
      return;
    }
  }

  // -- the sandbox's proxy ports (network mode proxy) --
  // The sandbox sends one message (its listening proxy ports) and closes the channel. It is
  // kept as it came, never parsed: each daemon gets a copy and its proxy decides about it.
  void receive_proxy_ports() {
    proxy_channel_.async_wait(asio::posix::stream_descriptor::wait_read, [this](const boost::system::error_code& ec) {
      if (ec) return;
      Result<posix::ReceivedFds> received = posix::receive_fds(proxy_channel_.native_handle());
      if (!received.ok() && received.status().code() == StatusCode::kUnavailable) {
        receive_proxy_ports();
        return;
      }
      boost::system::error_code ignored;
      proxy_channel_.close(ignored);
      if (received.ok() && !exit_) {
        proxy_ports_ = std::move(*received);
      } else {
        keeps_proxy_ = false;  // the sandbox sent nothing: its daemon's reader sees the end
      }
      relay_proxy_ports();
    });
  }

  // A reconnecting daemon gets a fresh relay end before its state (it reads it during the
  // handshake, so it must come first). Nothing is queued for it yet, so a direct send keeps
  // the order.
  void offer_proxy_relay() {
    if (!keeps_proxy_ || !outbox_.empty() || waiting_writable_) return;
    auto pair = posix::make_seqpacket_pair();
    if (!pair.ok()) return;
    if (!posix::send_fds(control_.native_handle(), proto::encode(Type::kProxyChannel), {pair->second.get()}).ok()) return;
    relay_ = std::move(pair->first);
    relay_proxy_ports();
  }

  // The kept ports to the connected daemon's relay end, once; the end then closes. A daemon
  // gone meanwhile loses nothing: the next one gets its own copy.
  void relay_proxy_ports() {
    if (!relay_) return;
    if (proxy_ports_) {
      std::vector<int> fds;
      for (const UniqueFd& fd : proxy_ports_->fds) fds.push_back(fd.get());
      posix::send_fds(relay_.get(), proxy_ports_->payload, fds).ok();
    } else if (keeps_proxy_) {
      return;  // not sent by the sandbox yet: relayed when it is
    }
    relay_.reset();
  }

  // The command has exited: its proxy ports serve nobody any more.
  void drop_proxy_ports() {
    boost::system::error_code ignored;
    proxy_channel_.close(ignored);
    proxy_ports_.reset();
    keeps_proxy_ = false;
    relay_.reset();
  }

  // -- the sandbox's own terminal (posix::SpawnRequest::console_socket) --
  // Until the helper has sent the master of the PTY it made in the sandbox (or closed the
  // socket without: the host terminal stays), neither output nor input moves, so no byte goes
  // to the terminal that is about to be replaced.
  void receive_console() {
    console_.async_wait(asio::posix::stream_descriptor::wait_read, [this](const boost::system::error_code& ec) {
      if (ec == asio::error::operation_aborted) return;
      Result<posix::ReceivedFds> received = posix::receive_fds(console_.native_handle());
      if (!ec && !received.ok() && received.status().code() == StatusCode::kUnavailable) {
        receive_console();
        return;
      }
      boost::system::error_code ignored;
      console_.close(ignored);
      if (received.ok() && received->fds.size() == 1) switch_terminal(std::move(received->fds.front()));
      console_pending_ = false;
      read_output();
      pump_input();
    });
  }

  // From now on the session's terminal is `master`. The host terminal stays open, unread:
  // closing it would hang up the sandbox's launcher and init (its session's terminal), and
  // nothing writes to it any more. What it holds was written before the switch (the helper's
  // messages come after it), so it is taken first.
  void switch_terminal(UniqueFd master) {
    read_ready_output(0);
    if (auto size = posix::pty_size(output_.native_handle()); size.ok()) {
      posix::resize_pty(master.get(), size->first, size->second).ok();
    }
    posix::set_nonblocking(master.get()).ok();
    Result<UniqueFd> writer = posix::dup_cloexec(master.get());
    host_terminal_.reset(output_.release());
    output_.assign(master.release());
    boost::system::error_code ignored;
    if (input_.is_open()) {
      input_.close(ignored);
      if (writer.ok()) {
        posix::set_nonblocking(writer->get()).ok();
        input_.assign(writer->release());
      }
    }
  }

  // -- the command's output --
  void read_output() {
    if (reading_ || output_closed_ || console_pending_ || !output_.is_open()) return;
    if (connected_ && ring_.end_offset() - sent_ + proto::kMaxChunk > ring_.capacity()) return;  // back-pressure
    reading_ = true;
    const auto parts = ring_.prepare(proto::kMaxChunk);
    const std::array<asio::mutable_buffer, 2> buffers = {asio::buffer(parts[0].data(), parts[0].size()),
                                                         asio::buffer(parts[1].data(), parts[1].size())};
    output_.async_read_some(buffers, [this](const boost::system::error_code& ec, size_t n) {
      reading_ = false;
      ring_.commit(n);
      if (n > 0) {
        read_ready_output(n);
        pump();
      }
      if (ec) {
        if (ec == asio::error::operation_aborted) return;
        output_closed_ = true;  // EOF on a pipe, EIO on a PTY master
        send_after_output(proto::encode(Type::kOutputClosed));
        return;
      }
      read_output();
    });
  }

  // More output already there, read in this turn up to one full message: a PTY master hands
  // out at most a few KiB per read, and a message (and a wake-up of the daemon) per read would
  // cost more than the bytes. An error or the end is left to the next asynchronous read.
  void read_ready_output(size_t already) {
    for (int i = 0; i < 64 && already < proto::kMaxChunk; ++i) {
      if (connected_ && ring_.end_offset() - sent_ + proto::kMaxChunk > ring_.capacity()) return;  // back-pressure
      const auto parts = ring_.prepare(proto::kMaxChunk - already);
      iovec iov[2] = {{parts[0].data(), parts[0].size()}, {parts[1].data(), parts[1].size()}};
      const ssize_t n = ::readv(output_.native_handle(), iov, parts[1].empty() ? 1 : 2);
      if (n < 0 && errno == EINTR) {
        ring_.commit(0);
        continue;
      }
      if (n <= 0) {
        ring_.commit(0);
        return;
      }
      ring_.commit(static_cast<size_t>(n));
      already += static_cast<size_t>(n);
    }
  }

  void write_input(std::string data) {
    if (!input_.is_open()) return;
    inbox_.push_back(std::move(data));
    pump_input();
  }

  void pump_input() {
    if (writing_input_ || console_pending_ || inbox_.empty() || !input_.is_open()) return;
    writing_input_ = true;
    asio::async_write(input_, asio::buffer(inbox_.front()), [this](const boost::system::error_code& ec, size_t) {
      writing_input_ = false;
      if (inbox_.empty()) return;
      inbox_.pop_front();
      if (ec) {
        inbox_.clear();
        return;
      }
      pump_input();
    });
  }

  // -- the command's exit --
  void watch_exit() {
    pidfd_.async_wait(asio::posix::stream_descriptor::wait_read, [this](const boost::system::error_code& ec) {
      if (ec) return;
      exec::ExitPeek peek = exec::peek_exit(pidfd_.native_handle());
      if (peek.state == exec::ExitPeek::State::kRunning || peek.state == exec::ExitPeek::State::kError) {
        watch_exit();
        return;
      }
      // The leader stays a zombie until the daemon says kReap: its pid is the process group
      // the daemon may still signal.
      exit_ = peek.state == exec::ExitPeek::State::kExited ? peek.status : exec::ExitStatus{};
      if (peek.state == exec::ExitPeek::State::kAlreadyReaped) reaped_ = true;
      boost::system::error_code ignored;
      input_.close(ignored);
      inbox_.clear();
      drop_proxy_ports();
      send_after_output(proto::encode_exit(*exit_));
    });
  }

  void reap() {
    if (reaped_ || !exit_) return;
    exec::reap_if_exited(pidfd_.native_handle());
    reaped_ = true;
  }

  // The session is over for the daemon: whatever still runs goes, the leader is reaped, the
  // state directory is removed, and the shim ends.
  void release() {
    if (!reaped_) {
      posix::signal_process_group(pid_, SIGKILL).ok();
      exec::reap_child(pidfd_.native_handle());
      reaped_ = true;
    }
    released_ = true;
    ::unlink((dir_ + "/" + kSocketName).c_str());
    ::unlink((dir_ + "/session.json").c_str());
    ::rmdir(dir_.c_str());
    io_.stop();
  }

  asio::io_context& io_;
  bool is_pty_;
  std::string dir_;
  pid_t pid_;
  asio::posix::stream_descriptor pidfd_;
  asio::posix::stream_descriptor output_;
  asio::posix::stream_descriptor input_;
  asio::posix::stream_descriptor control_;
  asio::posix::stream_descriptor listener_;
  asio::posix::stream_descriptor proxy_channel_;  // until the sandbox has sent its ports
  asio::posix::stream_descriptor console_;        // until the sandbox has sent its terminal
  UniqueFd host_terminal_;  // the PTY the command was started on, once the sandbox's replaced it
  bool console_pending_ = false;
  UniqueFd relay_;                                // the connected daemon's, until it has them
  UniqueFd waiting_peer_;  // a daemon that connected while its predecessor's close was unread
  std::optional<posix::ReceivedFds> proxy_ports_;
  bool keeps_proxy_ = false;  // network mode proxy, and the ports came or may still come
  exec::OutputRing ring_;
  std::array<char, proto::kMaxMessage> control_buffer_{};
  std::deque<std::string> outbox_;
  // "Output closed" and the exit: they follow every byte of output, so they wait here until the
  // ring has been sent (else a lossless Attach would see the exit before the last bytes).
  std::deque<std::string> after_output_;
  std::deque<std::string> inbox_;
  bool connected_ = false;
  bool awaiting_hello_ = false;
  bool waiting_writable_ = false;  // the socket was full: a wait for room is pending
  uint64_t connection_ = 0;        // counts disconnects: a wait of an earlier daemon's is stale
  bool write_failed_ = false;  // the daemon's end is closed; reading drains what it sent
  bool reset_seen_ = false;
  bool writing_input_ = false;
  bool reading_ = false;
  bool output_closed_ = false;
  bool reaped_ = false;
  bool released_ = false;
  uint64_t sent_ = 0;
  uint64_t delivered_ = 0;
  std::optional<exec::ExitStatus> exit_;
};

}  // namespace

int run_shim(const ShimOptions& options) {
  if (!harden_and_detach(options.control_fd)) return 3;
  UniqueFd control(options.control_fd);
  auto received = receive_spawn(control.get());
  if (!received.ok()) {
    std::string message = proto::encode(Type::kSpawnFailed, received.status().message());
    ::send(control.get(), message.data(), message.size(), MSG_NOSIGNAL);
    return 4;
  }
  if (Status nnp = take_no_new_privs(received->spawn); !nnp.ok()) {
    std::string message = proto::encode(Type::kSpawnFailed, nnp.message());
    ::send(control.get(), message.data(), message.size(), MSG_NOSIGNAL);
    return 7;
  }
  // Started ahead of its session (ShimPool), the shim learns its directory only now.
  const std::string session_dir = options.session_dir.empty() ? received->spawn.session_dir : options.session_dir;
  if (session_dir.empty() || session_dir[0] != '/') {
    std::string message = proto::encode(Type::kSpawnFailed, "no absolute session directory");
    ::send(control.get(), message.data(), message.size(), MSG_NOSIGNAL);
    return 5;
  }
  posix::SpawnRequest request = std::move(received->spawn.request);
  size_t next = 0;
  if (received->spawn.has_pass_fd) request.pass_fd = received->fds[next++].get();
  if (received->spawn.has_program_fd) request.program_fd = received->fds[next++].get();
  for (size_t i = 0; i < received->spawn.join_fd_count; ++i) request.join_fds.push_back(received->fds[next++].get());
  UniqueFd proxy_channel;  // close-on-exec: the command never holds them
  UniqueFd relay;
  if (received->spawn.relays_proxy) {
    proxy_channel = std::move(received->fds[next++]);
    relay = std::move(received->fds[next++]);
  }
  // Its place in the session's cgroup, before the command exists and before the ring is
  // allocated, so what the shim holds for the session counts there.
  for (size_t i = 0; i < received->spawn.shim_join_fd_count; ++i) {
    if (Status joined = join_cgroup(received->fds[next++].get()); !joined.ok()) {
      std::string message = proto::encode(Type::kSpawnFailed, "the shim cannot join its cgroup: " + joined.message());
      ::send(control.get(), message.data(), message.size(), MSG_NOSIGNAL);
      return 8;
    }
  }
  UniqueFd listener = listen_in(session_dir);
  if (!listener) {
    std::string message = proto::encode(Type::kSpawnFailed, "cannot listen in " + session_dir);
    ::send(control.get(), message.data(), message.size(), MSG_NOSIGNAL);
    return 5;
  }
  // The command dies with its keeper: nobody else could reap it or hold its output.
  request.parent_death_signal = SIGKILL;
  const bool input_open = request.stdio == posix::StdioMode::kPty || request.stdin_pipe;
  auto spawned = posix::spawn_process(request);
  received->fds.clear();  // the child has its copies
  if (!spawned.ok()) {
    std::string message = proto::encode(Type::kSpawnFailed, spawned.status().message());
    ::send(control.get(), message.data(), message.size(), MSG_NOSIGNAL);
    ::unlink((session_dir + "/" + kSocketName).c_str());
    return 6;
  }
  asio::io_context io(1);
  const bool pty = request.stdio == posix::StdioMode::kPty;
  Keeper keeper(io, session_dir, std::move(*spawned), received->spawn.attach_window_bytes, input_open, pty);
  keeper.start(std::move(control), std::move(listener), std::move(proxy_channel), std::move(relay));
  io.run();
  return 0;
}

}  // namespace codexd::shim
