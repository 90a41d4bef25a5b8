// Connections wait here, outside gRPC, until the client has sent the whole HTTP/2 client
// preface. gRPC 1.51 gives every connection it is handed a transport and buffers at once and
// never closes one that stays silent, so before this gate 24,000 silent connections took the
// daemon to its fd limit and every later client (root included) hung. Here a silent
// connection costs one fd and a slot and is closed after `timeout`; bytes that cannot begin an
// HTTP/2 connection close it at once. Slots are capped per uid and in total: when a uid's are
// full, its oldest waiting connection makes room for the new one (a real client sends its
// preface at once and so gets through a flood of its own uid's silent connections), and
// another uid's connections are untouched. Only the acceptor thread uses a gate.
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "base/unique_fd.h"
#include "platform/posix/peer_cred.h"

namespace codexd::server {

struct PrefaceGateLimits {
  std::chrono::milliseconds timeout{5000};
  size_t max_waiting_per_uid = 64;
  size_t max_waiting = 1024;
};

class PrefaceGate {
 public:
  using Clock = std::chrono::steady_clock;
  struct Ready {
    UniqueFd conn;
    posix::PeerCredentials peer;
  };
  enum class Eviction { kNone, kSameUid, kOldest };

  explicit PrefaceGate(PrefaceGateLimits limits) : limits_(limits) {}

  // Takes a freshly accepted connection; it waits here (checked at the next `collect`). When
  // the room was full, an older waiting connection was closed to make room, and the answer
  // says whose.
  Eviction add(UniqueFd conn, const posix::PeerCredentials& peer, Clock::time_point now);

  // One pollfd per waiting connection, appended to `out`: connections with a partial preface
  // are left out (their bytes keep them readable) and re-checked on the short tick instead.
  void append_pollfds(std::vector<pollfd>& out) const;
  // Milliseconds until the next deadline or re-check; -1 when nothing waits.
  int next_wakeup_ms(Clock::time_point now) const;
  // After poll(2) on what `append_pollfds` gave (`polled`, in the same order): checks the
  // connections that became readable, were added since, have a partial preface or expired.
  // Complete prefaces come out to be handed to gRPC; closed, foreign and expired connections
  // are closed (counted in `refused`).
  std::vector<Ready> collect(std::span<const pollfd> polled, Clock::time_point now);

  const PrefaceGateLimits& limits() const { return limits_; }
  size_t waiting() const { return waiting_.size(); }
  size_t refused() const { return refused_; }

 private:
  enum class Check { kWaiting, kPartial, kComplete, kRefused };
  struct Waiting {
    UniqueFd conn;
    posix::PeerCredentials peer;
    Clock::time_point deadline;
    bool partial = false;
  };
  static Check check(int fd);
  void forget(uid_t uid);
  void evict_oldest(std::optional<uid_t> of_uid);

  PrefaceGateLimits limits_;
  std::vector<Waiting> waiting_;
  std::map<uid_t, size_t> waiting_per_uid_;
  size_t refused_ = 0;
};

}  // namespace codexd::server
