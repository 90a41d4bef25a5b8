// Credentials of every live client connection, taken by the listener at accept time
// (SO_PEERCRED) and looked up per call. gRPC C++ does not expose peer credentials for Unix
// sockets, so we accept connections ourselves, record the peer under the connection's fd, and
// hand the fd to gRPC (AddInsecureChannelFromFd), whose peer string for such a channel is
// "fd:N". A call can only start while its connection (and so its fd number) is alive.
#pragma once

#include <sys/types.h>

#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace codexd::server {

struct PeerInfo {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

class PeerRegistry {
 public:
  void add(int fd, PeerInfo peer);
  // Looks up the connection of a call by its gRPC peer string ("fd:N").
  std::optional<PeerInfo> find(const std::string& grpc_peer) const;
  size_t size() const;

  // "fd:12" -> 12; -1 when the string has another form.
  static int fd_from_peer(const std::string& grpc_peer);

 private:
  mutable std::mutex mutex_;
  std::map<int, PeerInfo> peers_;
};

}  // namespace codexd::server
