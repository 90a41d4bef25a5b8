// The daemon's end of a session's shim (daemon/shim/shim.h): starting one for a new session,
// reconnecting to one a previous daemon left running, and the message stream in between.
// Runs on the core io thread like the Session that owns it.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "daemon/exec/shim_pool.h"
#include "daemon/exec/shim_protocol.h"
#include "platform/posix/spawn.h"

namespace codexd::exec {

// How the shim itself is placed: what the session's command is, and where the shim lives.
struct ShimPlacement {
  bool sandboxed = false;      // the command is sandboxed: the shim takes no_new_privs too
  std::vector<int> join_fds;   // cgroup.procs files the shim joins (its place in the session's
                               // cgroup, beside the command: ResourceGroup::keeper_join_fds)
};

class ShimLink : public std::enable_shared_from_this<ShimLink> {
 public:
  struct Handlers {
    std::function<void(uint64_t offset, std::string_view data)> on_output;
    std::function<void()> on_output_closed;
    std::function<void(const ExitStatus&)> on_exit;
    std::function<void(const std::string& why)> on_lost;  // the shim went away
    // Optional, all three or none: output received in place. `prepare_output` gives where the
    // next message may land (the session's ring, past its retained window); after each
    // receive into it exactly one of `take_output` (an output message at `offset` of `n`
    // bytes, now in that space: true when the session kept it there) or `discard_output`
    // follows. Output not taken is copied out and goes to `on_output` as usual.
    std::function<std::array<std::span<char>, 2>(size_t max_bytes)> prepare_output;
    std::function<bool(uint64_t offset, size_t n)> take_output;
    std::function<void()> discard_output;
  };

  // Starts a shim in `session_dir` and has it spawn `request` (its pass_fd and join_fds are
  // handed over; the caller keeps and closes its own copies). Waits, bounded, for the shim
  // to report the command's pid. On failure nothing is left running.
  // `proxy_channel` (network mode proxy, else null): the daemon's end of the sandbox's proxy
  // channel. The shim takes it over, keeps the proxy ports the sandbox sends, and relays them;
  // on success the caller's fd is replaced by the end it reads them from, as from the sandbox.
  static Result<std::shared_ptr<ShimLink>> launch(boost::asio::io_context& io, const ShimConfig& config,
                                                  const std::string& session_dir, const posix::SpawnRequest& request,
                                                  size_t attach_window_bytes, const ShimPlacement& placement = {},
                                                  UniqueFd* proxy_channel = nullptr);
  // The same with a shim already started and waiting (ShimPool): it is told `session_dir` and
  // moves itself into the placement's cgroup before it spawns the command.
  static Result<std::shared_ptr<ShimLink>> launch(boost::asio::io_context& io, StartedShim shim,
                                                  const std::string& session_dir, const posix::SpawnRequest& request,
                                                  size_t attach_window_bytes, const ShimPlacement& placement = {},
                                                  UniqueFd* proxy_channel = nullptr);
  // Connects to the shim listening in `session_dir` and asks for its state (bounded wait). A
  // shim that keeps a sandbox's proxy ports (protocol 2 on) relays them again: `proxy_channel`
  // gets the end to read them from, and stays invalid otherwise.
  static Result<std::shared_ptr<ShimLink>> reconnect(boost::asio::io_context& io, const std::string& session_dir,
                                                     shim::ShimState& state, UniqueFd* proxy_channel = nullptr);

  ~ShimLink();
  ShimLink(const ShimLink&) = delete;
  ShimLink& operator=(const ShimLink&) = delete;

  pid_t pid() const { return pid_; }
  // Starts delivering messages to `handlers` (called on the io thread).
  void start(Handlers handlers);

  void send_input(std::string_view data);
  void resize(unsigned short rows, unsigned short cols);
  void delivered(uint64_t offset);
  void reap();
  // The session is over: the shim kills what is left, reaps, removes its directory and ends.
  // Returns the shim's pidfd (readable once it has ended; invalid if the link was already
  // closed), which the link no longer holds: at shutdown the daemon releases every shim, then
  // waits for all of them at once.
  UniqueFd release();
  // A pidfd of the shim process while the link is open, else -1.
  int shim_pidfd() const { return shim_pidfd_.get(); }
  // Stops (or resumes) reading from the shim: a lossless Attach watcher that lags holds the
  // stream back, and the shim then holds the command back.
  void set_paused(bool paused);
  // The daemon goes away and leaves the session running: the connection is closed, the shim
  // keeps the command and waits for the next daemon.
  void detach();

 private:
  ShimLink(boost::asio::io_context& io, int fd, pid_t pid, UniqueFd shim_pidfd);
  static UniqueFd peer_pidfd(int fd);
  void read_next();
  void read_ready();
  // One message, received in place when the handlers allow it. >0: handled; 0: the end;
  // <0: -errno.
  ssize_t receive_one_message();
  void on_message(std::string_view message);
  void send(std::string message);
  void pump();
  void lost(const std::string& why);

  boost::asio::posix::stream_descriptor socket_;
  pid_t pid_;
  Handlers handlers_;
  std::vector<char> buffer_;
  std::deque<std::string> outbox_;
  bool writing_ = false;
  bool closed_ = false;
  bool reading_ = false;
  bool paused_ = false;
  // The shim process itself, to wait for its end at shutdown. A launched shim's comes from its
  // spawn (SO_PEERCRED of a socketpair names the daemon, which made the pair); a reconnected
  // one's from the peer of the connection.
  UniqueFd shim_pidfd_;
};

}  // namespace codexd::exec
