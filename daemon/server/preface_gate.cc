#include "daemon/server/preface_gate.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace codexd::server {
namespace {

// RFC 9113 §3.4: every HTTP/2 client connection starts with these 24 bytes.
constexpr std::string_view kClientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
// A connection with part of the preface is re-checked this often (polling it would spin).
constexpr std::chrono::milliseconds kPartialRecheck{20};

}  // namespace

PrefaceGate::Eviction PrefaceGate::add(UniqueFd conn, const posix::PeerCredentials& peer, Clock::time_point now) {
  Eviction eviction = Eviction::kNone;
  auto mine = waiting_per_uid_.find(peer.uid);
  if (mine != waiting_per_uid_.end() && mine->second >= limits_.max_waiting_per_uid) {
    evict_oldest(peer.uid);
    eviction = Eviction::kSameUid;
  } else if (waiting_.size() >= limits_.max_waiting) {
    evict_oldest(std::nullopt);
    eviction = Eviction::kOldest;
  }
  ++waiting_per_uid_[peer.uid];
  waiting_.push_back(Waiting{std::move(conn), peer, now + limits_.timeout, false});
  return eviction;
}

// `waiting_` is in arrival order, so the first match is the oldest.
void PrefaceGate::evict_oldest(std::optional<uid_t> of_uid) {
  auto it = std::find_if(waiting_.begin(), waiting_.end(),
                         [&](const Waiting& w) { return !of_uid || w.peer.uid == *of_uid; });
  if (it == waiting_.end()) return;
  forget(it->peer.uid);
  ++refused_;
  waiting_.erase(it);
}

void PrefaceGate::append_pollfds(std::vector<pollfd>& out) const {
  for (const auto& w : waiting_) {
    if (!w.partial) out.push_back(pollfd{w.conn.get(), POLLIN, 0});
  }
}

int PrefaceGate::next_wakeup_ms(Clock::time_point now) const {
  if (waiting_.empty()) return -1;
  auto next = Clock::time_point::max();
  for (const auto& w : waiting_) next = std::min(next, w.partial ? now + kPartialRecheck : w.deadline);
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, 60'000));
}

PrefaceGate::Check PrefaceGate::check(int fd) {
  char buf[kClientPreface.size()];
  ssize_t n = ::recv(fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0) return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? Check::kWaiting : Check::kRefused;
  if (n == 0) return Check::kRefused;  // the client went away
  if (std::memcmp(buf, kClientPreface.data(), static_cast<size_t>(n)) != 0) return Check::kRefused;
  return static_cast<size_t>(n) == kClientPreface.size() ? Check::kComplete : Check::kPartial;
}

void PrefaceGate::forget(uid_t uid) {
  auto it = waiting_per_uid_.find(uid);
  if (it != waiting_per_uid_.end() && --it->second == 0) waiting_per_uid_.erase(it);
}

std::vector<PrefaceGate::Ready> PrefaceGate::collect(std::span<const pollfd> polled, Clock::time_point now) {
  std::vector<Ready> ready;
  auto keep = waiting_.begin();
  size_t next_polled = 0;  // `polled` lists the non-partial connections, in order
  for (auto& w : waiting_) {
    bool look = w.partial || now >= w.deadline;
    if (!w.partial && next_polled < polled.size() && polled[next_polled].fd == w.conn.get()) {
      look = look || polled[next_polled].revents != 0;
      ++next_polled;
    } else if (!w.partial) {
      look = true;  // added after the poll
    }
    Check c = look ? check(w.conn.get()) : Check::kWaiting;
    if (c != Check::kComplete && c != Check::kRefused && now >= w.deadline) c = Check::kRefused;
    if (c == Check::kWaiting || c == Check::kPartial) {
      w.partial = c == Check::kPartial;
      if (&*keep != &w) *keep = std::move(w);
      ++keep;
      continue;
    }
    forget(w.peer.uid);
    if (c == Check::kComplete) {
      ready.push_back(Ready{std::move(w.conn), w.peer});
    } else {
      ++refused_;
      w.conn.reset();
    }
  }
  waiting_.erase(keep, waiting_.end());
  return ready;
}

}  // namespace codexd::server
