// The daemon's Unix socket: safe creation (private directory, stale-socket cleanup, refusal
// when another daemon is live), accept with peer credentials, and hand-off to gRPC.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "base/status.h"
#include "base/unique_fd.h"
#include "daemon/server/preface_gate.h"
#include "platform/posix/peer_cred.h"

namespace codexd::server {

struct SocketOptions {
  std::string path;
  mode_t socket_mode = 0600;   // user mode; system mode: 0660
  mode_t dir_mode = 0700;      // user mode; system mode: 0750
  std::optional<gid_t> group;  // system mode: chown root:codexd
};

// Creates the directory (mode enforced, must be ours), removes a stale socket, refuses when a
// live daemon answers on the path, binds and listens. `inherited_fd` >= 0: use that listening
// socket (systemd socket activation) instead of creating one.
Result<UniqueFd> open_listening_socket(const SocketOptions& options);

// Accepts connections on a thread of its own (accept blocks nothing else), takes each peer's
// credentials, asks `admit` whether to keep the connection, holds kept ones in a PrefaceGate
// until they have sent the HTTP/2 client preface, and passes those on.
class Acceptor {
 public:
  using Admit = std::function<bool(int fd, const posix::PeerCredentials& peer)>;  // false: closed
  using HandOff = std::function<void(int fd, const posix::PeerCredentials& peer)>;  // takes the fd

  Acceptor(UniqueFd listener, PrefaceGateLimits gate_limits, Admit admit, HandOff hand_off);
  ~Acceptor();
  Acceptor(const Acceptor&) = delete;
  Acceptor& operator=(const Acceptor&) = delete;

  void start();
  // Stops accepting and closes the listening socket; returns when the thread has exited.
  void stop();
  // Stops accepting and hands the listening socket back (a restart in place passes it on):
  // connections that arrive meanwhile wait in its backlog for the next daemon.
  UniqueFd stop_keeping_listener();

 private:
  void run();
  void accept_one();

  UniqueFd listener_;
  PrefaceGate gate_;
  UniqueFd wake_read_, wake_write_;
  Admit admit_;
  HandOff hand_off_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
};

}  // namespace codexd::server
