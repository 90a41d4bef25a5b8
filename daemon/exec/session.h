// One running command and its output: the unit the ProcessStore keeps.
//
// Threading: a Session lives on one io_context thread (the daemon's "core" strand); every
// method must be called there. Nothing blocks: output and exit arrive as Asio completions,
// and callers wait through callbacks (no thread is held by a waiting RPC).
//
// Output goes to two places: a head+tail buffer drained by ExecCommand/WriteStdin/Poll
// (Codex semantics), and a ring of the newest bytes, addressed by stream offset, that any
// number of Attach watchers read without consuming the poll buffer. A Poll with from_offset
// (ReRead) reads the ring instead of draining, and moves delivery forward to where it stopped.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/exec/exit_status.h"
#include "daemon/exec/head_tail_buffer.h"
#include "daemon/exec/output_ring.h"
#include "daemon/exec/shim_link.h"
#include "base/status.h"
#include "platform/limits/limits.h"
#include "platform/posix/spawn.h"
#include "platform/sandbox/sandbox.h"

namespace codexd::exec {

using Clock = std::chrono::steady_clock;

// Who started the session and what it runs (immutable).
struct SessionMetadata {
  int id = 0;
  uid_t owner_uid = 0;
  std::string agent_id;
  std::string call_id;
  std::vector<std::string> argv;
  std::string cwd;
  bool tty = false;
  sandbox::Backend sandbox = sandbox::Backend::kNone;
  sandbox::NetworkMode network = sandbox::NetworkMode::kOff;
  std::chrono::system_clock::time_point started_at;
};

struct SessionLimits {
  size_t poll_buffer_bytes = HeadTailBuffer::kDefaultMaxBytes;  // Codex: 1 MiB head+tail
  size_t attach_window_bytes = 1024 * 1024;                     // replayable by Attach
  size_t max_pending_input_bytes = 1024 * 1024;                 // queued, not yet written to the PTY
};

// What a wait returns.
struct Collected {
  std::string output;                // drained bytes (raw)
  uint64_t omitted_bytes = 0;        // bytes since the previous drain that the head+tail buffer dropped
  uint64_t output_offset = 0;        // stream offset after the drained bytes
  uint64_t lost_bytes = 0;           // re-read (WaitRequest::from_offset): bytes from there no longer retained
  uid_t owner_uid = 0;               // the session's owner
  sandbox::Backend sandbox = sandbox::Backend::kNone;  // what the session runs in
  std::optional<ExitStatus> exit;    // the process exited: the session is over
  limits::Termination termination = limits::Termination::kExited;  // with `exit`
  std::string termination_note;      // with `exit`: "killed: memory limit 256 MiB reached" or ""
  limits::ResourceUsage usage;       // so far (final with `exit`)
};

enum class WaitMode {
  kUntilDeadlineOrExit,  // ExecCommand / WriteStdin: the whole yield, or until exit
  kUntilActivity,        // Poll: at the first new output or exit
};

// Poll with from_offset: instead of draining the poll buffer, read the stream from `offset`
// (out of the ring, the Attach window), at most `max_bytes` contiguous bytes. Delivery moves
// forward to max(delivered, the offset after the returned bytes). `offset` must be at most
// stream_offset() (the caller checks).
struct ReRead {
  uint64_t offset = 0;
  size_t max_bytes = 0;
};

// One step of an Attach watcher.
struct WatchStep {
  enum class Kind { kNothingYet, kGap, kData, kExit };
  Kind kind = Kind::kNothingYet;
  uint64_t from = 0, to = 0;  // kGap: lost [from, to)
  uint64_t offset = 0;        // kData: offset of data[0]
  std::string data;
  ExitStatus exit;            // kExit
  uint64_t final_offset = 0;  // kExit
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  using WaitId = uint64_t;
  using WatcherId = uint64_t;

  // `group` holds the command's processes (its cgroup, or its process group); null: the
  // process group alone.
  static std::shared_ptr<Session> start(boost::asio::io_context& io, SessionMetadata metadata,
                                        posix::SpawnedProcess process, SessionLimits limits = {},
                                        std::unique_ptr<limits::ResourceGroup> group = nullptr);
  // A session whose command a shim holds (durable sessions, daemon/exec/shim_link.h): output,
  // input and the exit travel over `link`. `adopted`: the state of a shim a previous daemon
  // started; the ring starts at its oldest byte, and bytes before its delivered offset are
  // not delivered to Poll again.
  static std::shared_ptr<Session> start_with_shim(boost::asio::io_context& io, SessionMetadata metadata,
                                                  std::shared_ptr<ShimLink> link, bool input_open,
                                                  SessionLimits limits = {},
                                                  std::unique_ptr<limits::ResourceGroup> group = nullptr,
                                                  const shim::ShimState* adopted = nullptr);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const SessionMetadata& metadata() const { return metadata_; }
  int id() const { return metadata_.id; }
  pid_t pid() const { return pid_; }
  // A terminal session's window size as last set (at start, by ResizeTerminal, or as its shim
  // reported it on adoption); {0, 0} without a terminal.
  std::pair<unsigned short, unsigned short> terminal_size() const { return terminal_size_; }
  void set_terminal_size(unsigned short rows, unsigned short cols) { terminal_size_ = {rows, cols}; }
  bool has_exited() const { return exit_.has_value(); }
  bool finished() const { return finished_; }  // exited and its output drained
  const std::optional<ExitStatus>& exit_status() const { return exit_; }
  uint64_t stream_offset() const { return ring_.end_offset(); }
  size_t waiting_calls() const { return waiters_.size(); }
  Clock::time_point last_used() const { return last_used_; }
  void touch() { last_used_ = Clock::now(); }

  // Waits for output/exit per `mode` until `deadline`, then drains the poll buffer into `done`.
  // With `reread`: returns the stream from reread->offset instead (see ReRead); with
  // kUntilActivity, activity means bytes at or after that offset.
  WaitId wait(WaitMode mode, Clock::time_point deadline, std::function<void(Collected)> done,
              std::optional<ReRead> reread = std::nullopt);
  // The waiting RPC went away: forget the waiter, leave the output for the next caller.
  void cancel_wait(WaitId id);

  // Queues bytes for the command's stdin (TTY sessions, or pipes opened with stdin).
  Status write_input(std::string data);
  bool has_input() const { return shim_ ? shim_input_open_ && !exit_ : input_.is_open(); }
  bool durable() const { return shim_ != nullptr; }
  // Daemon shutdown that keeps sessions: the shim keeps the command, its group stays.
  void detach_for_restart();
  Status resize(unsigned short rows, unsigned short cols);

  // Ctrl-C: SIGINT to the process group (what a terminal does).
  Status interrupt();
  // Cancel: the signal reaches every process of the session (its whole cgroup where there is
  // one, also processes that left the process group); the session then reports "cancelled".
  Status signal_all(int signal);
  void terminate(std::chrono::milliseconds grace);       // SIGTERM to all, then SIGKILL to all after grace
  void kill();                                           // SIGKILL to all
  void mark_cancelled() { cancelled_ = true; }

  // What the session used so far (final once finished), and how it ended (after the exit).
  limits::ResourceUsage usage() const;
  limits::Termination termination() const;
  std::string termination_note() const;
  // The store let go of this session (reported, pruned): kill whatever still runs.
  void release();
  // Daemon shutdown: SIGKILL the group and reap now, synchronously. A durable session's shim
  // kills and reaps instead: its pidfd is returned (else invalid), readable once it has done so.
  UniqueFd shutdown_now();

  // Attach: next thing for a watcher at `offset` (advanced past what is returned).
  WatcherId add_watcher(uint64_t start_offset, bool lossless);
  void remove_watcher(WatcherId id);
  WatchStep next_for_watcher(WatcherId id, size_t max_bytes);
  // The same, but a kData step's bytes go to `data` (its capacity reused) and step.data stays
  // empty: a streaming caller keeps one buffer instead of allocating one per message.
  WatchStep next_for_watcher(WatcherId id, size_t max_bytes, std::string& data);
  uint64_t oldest_retained_offset() const { return ring_.begin_offset(); }
  // Keeps `resource` (e.g. the proxy ports of the sandbox) until the process has exited, with
  // whatever it holds already; an exited session drops it at once.
  void hold_until_exit(std::shared_ptr<void> resource) {
    if (!exit_seen_at_) held_until_exit_.push_back(std::move(resource));
  }
  // Calls `callback` once, at the next output, exit or finish.
  void notify_on_activity(std::function<void()> callback);

 private:
  Session(boost::asio::io_context& io, SessionMetadata metadata, posix::SpawnedProcess process, SessionLimits limits,
          std::unique_ptr<limits::ResourceGroup> group);
  void on_shim_output(uint64_t offset, std::string_view data);
  void use_ring_for_tail() { tail_in_ring_ = ring_.capacity() >= pending_.tail_budget(); }
  bool take_shim_output(uint64_t offset, size_t n);
  void exited(const ExitStatus& status);
  void kill_tree();
  void reaped_leader();
  void begin();
  void read_more();
  void on_read(const boost::system::error_code& ec, size_t n);
  void on_output(std::string_view data);
  void on_output_closed();
  void watch_exit();
  void on_exit_ready();
  void maybe_finish();
  void abandon_output_when_quiet();
  void finish();
  void pump_input();
  void evaluate_waiters();
  void complete_waiter(WaitId id);
  void collect_reread(const ReRead& reread, Collected& collected);
  void fire_activity();
  void activity_soon();
  bool reading_blocked_by_lossless_watcher() const;

  struct Waiter {
    WaitMode mode;
    Clock::time_point deadline;
    std::function<void(Collected)> done;
    std::unique_ptr<boost::asio::steady_timer> timer;
    std::optional<ReRead> reread;
    std::optional<Clock::time_point> output_seen_at;  // kUntilActivity: when it first had bytes
  };
  struct Watcher {
    uint64_t offset;
    bool lossless;
  };
  void arm_waiter_timer(Waiter& waiter, Clock::time_point at);

  boost::asio::io_context& io_;
  SessionMetadata metadata_;
  SessionLimits limits_;
  pid_t pid_;
  boost::asio::posix::stream_descriptor pidfd_;
  boost::asio::posix::stream_descriptor output_;
  boost::asio::posix::stream_descriptor input_;
  boost::asio::steady_timer trailing_timer_;
  boost::asio::steady_timer kill_timer_;
  std::vector<char> read_buffer_;
  bool reading_ = false;
  bool output_closed_ = false;
  bool finished_ = false;
  bool reaped_ = false;
  bool released_ = false;
  std::optional<ExitStatus> exit_;
  std::pair<unsigned short, unsigned short> terminal_size_{0, 0};
  std::optional<Clock::time_point> exit_seen_at_;
  std::vector<std::shared_ptr<void>> held_until_exit_;
  // Removed once finished (usage kept below); a durable session's once its shim is released too.
  std::unique_ptr<limits::ResourceGroup> group_;
  bool measured_ = false;  // final_usage_ and final_hit_ are read (the leader was reaped)
  limits::ResourceUsage final_usage_;
  limits::LimitHit final_hit_ = limits::LimitHit::kNone;
  limits::ResourceLimits effective_limits_;
  bool cancelled_ = false;
  Clock::time_point last_used_;

  std::shared_ptr<ShimLink> shim_;  // durable: the shim holds the command
  bool shim_input_open_ = false;
  uint64_t delivered_before_adoption_ = 0;  // adopted: Poll had these bytes before the restart

  HeadTailBuffer pending_;         // stream bytes [delivered_offset_, end) for the next drain
  // When the ring holds at least a tail's worth, the tail is not copied: pending_ keeps the
  // head, and the tail is the newest min(after_head_, tail budget) bytes of the ring (every
  // byte for the poll buffer is also the ring's newest). after_head_: bytes past the head.
  bool tail_in_ring_ = false;
  uint64_t after_head_ = 0;
  void push_pending(std::string_view data);
  bool pending_empty() const { return pending_.empty() && after_head_ == 0; }
  // Head then tail, and the bytes dropped in between; resets the poll buffer.
  std::string drain_pending(uint64_t* omitted);
  uint64_t delivered_offset_ = 0;  // how far poll delivery has gone
  OutputRing ring_;

  std::map<WaitId, Waiter> waiters_;
  WaitId next_wait_id_ = 1;
  std::map<WatcherId, Watcher> watchers_;
  WatcherId next_watcher_id_ = 1;
  std::vector<std::function<void()>> activity_callbacks_;
  bool activity_posted_ = false;  // shim output: one evaluation for all chunks read together
  Clock::time_point last_output_at_{};

  std::deque<std::string> input_queue_;
  size_t input_queued_bytes_ = 0;
  bool writing_ = false;
};

}  // namespace codexd::exec
