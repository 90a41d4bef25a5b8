#include "daemon/exec/shim_pool.h"

#include <poll.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>


#include "daemon/exec/exit_status.h"
#include "daemon/exec/shim_protocol.h"
#include "platform/posix/fd_passing.h"
#include "platform/posix/spawn.h"

namespace codexd::exec {
namespace {

// Long enough for the command of the session that took a shim to have started (a short one to
// have ended), short enough that an agent's next command finds a shim waiting.
constexpr std::chrono::milliseconds kRefillDelay{50};
// A waiting shim exits as soon as its socket closes; this bounds one that does not.
constexpr int kEndWaitMs = 1'000;

// The spawn request may be large (a long argv or environment) and goes in one message.
void widen_send_buffer(int fd, size_t bytes) {
  int size = static_cast<int>(bytes);
  if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) != 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  }
}

}  // namespace

Result<StartedShim> start_waiting_shim(const ShimConfig& config) {
  CODEXD_ASSIGN_OR_RETURN(posix::SocketPair pair, posix::make_seqpacket_pair());
  widen_send_buffer(pair.first.get(), shim::kMaxSpawnMessage);
  posix::SpawnRequest shim_request;
  shim_request.executable = config.shim_path;
  shim_request.argv = {config.shim_path};
  shim_request.cwd.assign(1, '/');  // (assign: GCC 12 warns falsely on = "/" here)
  shim_request.stdio = posix::StdioMode::kPipesMerged;
  shim_request.parent_death_signal = 0;  // it outlives the daemon: that is its job
  shim_request.pass_fd = pair.second.get();
  auto started = posix::spawn_process(shim_request);
  if (!started.ok()) {
    std::string why = "cannot start the session shim ";
    why.append(config.shim_path).append(": ").append(started.status().message());
    return Unavailable(why);
  }
  StartedShim shim;
  shim.control = std::move(pair.first);
  shim.pidfd = std::move(started->pidfd);
  shim.pid = started->pid;
  return shim;
}

void end_waiting_shim(StartedShim shim) {
  shim.control.reset();
  if (!shim.pidfd) return;
  pollfd ended{shim.pidfd.get(), POLLIN, 0};
  if (::poll(&ended, 1, kEndWaitMs) <= 0) ::syscall(SYS_pidfd_send_signal, shim.pidfd.get(), SIGKILL, nullptr, 0);
  reap_child(shim.pidfd.get());
}

ShimPool::ShimPool(const ShimConfig& config, size_t size) : config_(config), size_(size) {
  // The first ones here, before the daemon serves: its descriptors and children are then what
  // they stay, and the first command finds a shim waiting.
  while (waiting_.size() < size_) {
    auto started = start_waiting_shim(config_);
    if (!started.ok()) {
      start_failed_ = true;
      break;
    }
    waiting_.push_back(std::move(*started));
  }
  if (size_ > 0) starter_ = std::thread([this] { run(); });
}

ShimPool::~ShimPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (starter_.joinable()) starter_.join();
  for (StartedShim& shim : waiting_) shim.control.reset();  // all told at once, then reaped
  for (StartedShim& shim : waiting_) end_waiting_shim(std::move(shim));
}

size_t ShimPool::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_.size();
}

Result<StartedShim> ShimPool::take() {
  for (;;) {
    StartedShim shim;
    {
      std::lock_guard lock(mutex_);
      if (waiting_.empty()) break;
      shim = std::move(waiting_.back());
      waiting_.pop_back();
    }
    wake_.notify_one();
    pollfd ended{shim.pidfd.get(), POLLIN, 0};
    if (::poll(&ended, 1, 0) == 0) return shim;
    end_waiting_shim(std::move(shim));  // it died while waiting (killed by hand): reap, take the next
  }
  auto started = start_waiting_shim(config_);
  if (started.ok()) {
    {
      std::lock_guard lock(mutex_);
      start_failed_ = false;
    }
    wake_.notify_one();
  }
  return started;
}

void ShimPool::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || (!start_failed_ && waiting_.size() < size_); });
    // Not at once: the session that just took a shim is starting its command, and on a small
    // machine a shim started beside it would slow exactly that command down.
    if (wake_.wait_for(lock, kRefillDelay, [this] { return stopping_; })) return;
    lock.unlock();
    auto started = start_waiting_shim(config_);
    lock.lock();
    if (started.ok()) {
      waiting_.push_back(std::move(*started));
    } else {
      start_failed_ = true;  // the next take() starts its own and reports why it cannot
    }
  }
}

}  // namespace codexd::exec
