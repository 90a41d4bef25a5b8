#include "daemon/server/peer_registry.h"

#include <charconv>

namespace codexd::server {

void PeerRegistry::add(int fd, PeerInfo peer) {
  std::lock_guard lock(mutex_);
  peers_[fd] = peer;  // an fd number is reused only after gRPC closed the previous connection
}

std::optional<PeerInfo> PeerRegistry::find(const std::string& grpc_peer) const {
  int fd = fd_from_peer(grpc_peer);
  if (fd < 0) return std::nullopt;
  std::lock_guard lock(mutex_);
  auto it = peers_.find(fd);
  if (it == peers_.end()) return std::nullopt;
  return it->second;
}

size_t PeerRegistry::size() const {
  std::lock_guard lock(mutex_);
  return peers_.size();
}

int PeerRegistry::fd_from_peer(const std::string& grpc_peer) {
  static constexpr std::string_view kPrefix = "fd:";
  if (grpc_peer.size() <= kPrefix.size() || grpc_peer.compare(0, kPrefix.size(), kPrefix) != 0) return -1;
  int fd = -1;
  const char* begin = grpc_peer.data() + kPrefix.size();
  const char* end = grpc_peer.data() + grpc_peer.size();
  auto [ptr, ec] = std::from_chars(begin, end, fd);
  if (ec != std::errc() || ptr != end || fd < 0) return -1;
  return fd;
}

}  // namespace codexd::server
