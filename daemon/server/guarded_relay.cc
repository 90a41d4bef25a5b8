#include "daemon/server/guarded_relay.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/server/io_thread.h"
#include "daemon/server/log_throttle.h"

namespace codexd::server {

namespace asio = boost::asio;

namespace {

constexpr size_t kChunk = 64 * 1024;
// Chunks one direction moves before other relays get the thread: a fast Attach stream must
// not hold up every other client.
constexpr int kChunksPerTurn = 8;

bool would_block(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

}  // namespace

class Relay;

struct GuardedRelays::Impl {
  explicit Impl(Http2GuardLimits l) : limits(l) {}

  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  std::thread thread;
  Http2GuardLimits limits;
  std::vector<char> scratch = std::vector<char>(kChunk);  // the relay thread's alone
  std::map<uint64_t, std::weak_ptr<Relay>> relays;       // the relay thread's alone
  uint64_t next_id = 0;                                   // the relay thread's alone
  std::atomic<size_t> live{0};
  std::atomic<uint64_t> refused{0};
  LogThrottle refusals{spdlog::level::warn};
  std::mutex mutex;
  bool stopped = false;                 // under mutex
  std::map<uid_t, size_t> counted;      // under mutex: relays of uids with a limit

  void uncount(uid_t uid) {
    std::lock_guard lock(mutex);
    if (auto it = counted.find(uid); it != counted.end() && --it->second == 0) counted.erase(it);
  }
};

// One client connection and gRPC's socketpair end. Everything runs on the relay thread.
class Relay : public std::enable_shared_from_this<Relay> {
 public:
  Relay(GuardedRelays::Impl& owner, uint64_t id, int client, int inner, uid_t uid, pid_t pid, bool counted)
      : owner_(owner),
        id_(id),
        client_(owner.io, client),
        inner_(owner.io, inner),
        guard_(owner.limits),
        uid_(uid),
        pid_(pid),
        counted_(counted),
        up_{&client_, &inner_, true, {}},
        down_{&inner_, &client_, false, {}} {}

  void start() {
    pump(up_);
    pump(down_);
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    client_.close(ignored);
    inner_.close(ignored);
    owner_.relays.erase(id_);
    owner_.live.fetch_sub(1, std::memory_order_relaxed);
    if (counted_) owner_.uncount(uid_);
  }

 private:
  struct Direction {
    asio::posix::stream_descriptor* from;
    asio::posix::stream_descriptor* to;
    bool inspect;         // client-to-server: through the guard
    std::string pending;  // read but not yet taken by `to`
  };

  void pump(Direction& d) {
    for (int turn = 0; turn < kChunksPerTurn && !closed_; ++turn) {
      if (!d.pending.empty() && !flush(d)) return;
      ssize_t n = ::recv(d.from->native_handle(), owner_.scratch.data(), owner_.scratch.size(), MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && would_block(errno)) {
        wait(d, *d.from, asio::posix::stream_descriptor::wait_read);
        return;
      }
      if (n <= 0) {
        end_of(d, n == 0);
        return;
      }
      if (d.inspect) {
        if (const std::string& why = guard_.feed({owner_.scratch.data(), static_cast<size_t>(n)}); !why.empty()) {
          owner_.refused.fetch_add(1, std::memory_order_relaxed);
          owner_.refusals.log("closing the connection of pid {} uid {}: {}", pid_, uid_, why);
          close();
          return;
        }
      }
      if (!write_or_keep(d, owner_.scratch.data(), static_cast<size_t>(n))) return;
    }
    if (closed_) return;
    asio::post(owner_.io, [self = shared_from_this(), &d] { self->pump(d); });
  }

  // Writes `data` to d.to; what it cannot take now is kept in d.pending (only that much, so an
  // idle relay holds no buffer) and the direction waits for room. False: stop pumping.
  bool write_or_keep(Direction& d, const char* data, size_t size) {
    size_t sent = 0;
    while (sent < size) {
      ssize_t n = ::send(d.to->native_handle(), data + sent, size - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && would_block(errno)) {
        d.pending.assign(data + sent, size - sent);
        wait(d, *d.to, asio::posix::stream_descriptor::wait_write);
        return false;
      }
      if (n < 0) {
        close();  // that side is gone
        return false;
      }
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  bool flush(Direction& d) {
    std::string pending = std::exchange(d.pending, std::string());
    return write_or_keep(d, pending.data(), pending.size());
  }

  // The client's end of stream is passed on (gRPC sees it and closes); once gRPC's end is
  // closed nothing more can pass either way, so the relay ends. A reset ends it at once.
  void end_of(Direction& d, bool orderly) {
    if (orderly && &d == &up_) {
      ::shutdown(inner_.native_handle(), SHUT_WR);
      return;
    }
    close();
  }

  void wait(Direction& d, asio::posix::stream_descriptor& fd, asio::posix::stream_descriptor::wait_type type) {
    fd.async_wait(type, [self = shared_from_this(), &d](const boost::system::error_code& ec) {
      if (!ec) self->pump(d);
    });
  }

  GuardedRelays::Impl& owner_;
  uint64_t id_;
  asio::posix::stream_descriptor client_;
  asio::posix::stream_descriptor inner_;
  Http2HeaderGuard guard_;
  uid_t uid_;
  pid_t pid_;
  bool counted_;  // against its uid's limit
  Direction up_;
  Direction down_;
  bool closed_ = false;
};

GuardedRelays::GuardedRelays(Http2GuardLimits limits) : impl_(std::make_unique<Impl>(limits)) {
  impl_->thread = std::thread([impl = impl_.get()] { run_until_stopped(impl->io, "connection relay"); });
}

GuardedRelays::~GuardedRelays() { stop(); }

size_t GuardedRelays::live() const { return impl_->live.load(std::memory_order_relaxed); }
uint64_t GuardedRelays::refused() const { return impl_->refused.load(std::memory_order_relaxed); }

Result<UniqueFd> GuardedRelays::relay(UniqueFd client, uid_t uid, pid_t pid, size_t uid_limit) {
  const bool counted = uid_limit > 0;
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopped) return Unavailable("codexd is shutting down");
    if (counted) {
      size_t& held = impl_->counted[uid];
      if (held >= uid_limit) {
        return ResourceExhausted("uid " + std::to_string(uid) + " already holds " + std::to_string(held) +
                                 " connections (daemon.max_connections_per_uid)");
      }
      ++held;
    }
    impl_->live.fetch_add(1, std::memory_order_relaxed);
  }
  auto unclaim = [&] {
    impl_->live.fetch_sub(1, std::memory_order_relaxed);
    if (counted) impl_->uncount(uid);
  };
  int pair[2];
  // Both ends non-blocking: gRPC reads its end until EAGAIN, and a blocking end would hold a
  // request back until the next bytes arrive.
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair) != 0) {
    const int err = errno;
    unclaim();
    return Unavailable(std::string("socketpair for a client connection: ") + std::strerror(err));
  }
  UniqueFd ours(pair[0]);
  UniqueFd grpc_end(pair[1]);
  ::fcntl(client.get(), F_SETFL, ::fcntl(client.get(), F_GETFL) | O_NONBLOCK);
  asio::post(impl_->io, [impl = impl_.get(), client = client.release(), inner = ours.release(), uid, pid, counted] {
    const uint64_t id = ++impl->next_id;
    auto relay = std::make_shared<Relay>(*impl, id, client, inner, uid, pid, counted);
    impl->relays[id] = relay;
    bool stopped = false;
    {
      std::lock_guard lock(impl->mutex);
      stopped = impl->stopped;
    }
    if (stopped) {
      relay->close();  // stop() closed the others before this one arrived
      return;
    }
    relay->start();
  });
  return grpc_end;
}

void GuardedRelays::stop() {
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopped) return;
    impl_->stopped = true;
  }
  asio::post(impl_->io, [impl = impl_.get()] {
    std::vector<std::shared_ptr<Relay>> live;
    for (auto& [id, weak] : impl->relays) {
      if (auto relay = weak.lock()) live.push_back(std::move(relay));
    }
    for (auto& relay : live) relay->close();
  });
  impl_->work.reset();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace codexd::server
