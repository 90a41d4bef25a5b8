// The ProcessStore's operations as the API sees them: spawn a session and wait, write, poll,
// cancel, list. Produces Codex-shaped outcomes (truncated output, token counts, result text).
// Runs on the core io thread; completions are callbacks, so no thread waits.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "daemon/exec/launch_spec.h"
#include "daemon/exec/process_store.h"
#include "daemon/exec/launch_spawn.h"
#include "daemon/exec/session.h"
#include "daemon/exec/shim_pool.h"
#include "base/status.h"
#include "platform/limits/limits.h"

namespace codexd::exec {

struct SessionRecord;

// One exec_command / write_stdin / poll result.
struct UnifiedOutcome {
  std::string chunk_id;
  double wall_time_seconds = 0;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::optional<int> session_id;
  std::string output;           // valid UTF-8, truncated to max_output_tokens
  std::string raw_output;       // untruncated (lossy UTF-8), for the sandbox-denial heuristic
  uint64_t original_token_count = 0;
  uint64_t output_offset = 0;
  uint64_t lost_bytes = 0;      // Poll.from_offset older than the retained window
  std::vector<std::string> warnings;
  std::optional<limits::Termination> termination;  // with exit_code
  std::string termination_note;                    // "killed: memory limit 256 MiB reached" or ""
  limits::ResourceUsage usage;
  // The session's sandbox: every answer about a session says what it runs in, as
  // ListSessions does (the orchestrator's first answer has it from the plan too).
  sandbox::Backend sandbox = sandbox::Backend::kNone;
  // Rendered last (after the orchestrator may have changed fields), see render_text().
  std::string text;
};
void render_text(UnifiedOutcome& outcome);

struct EngineOptions {
  SessionLimits session_limits;
  uint32_t max_poll_ms = 300'000;  // background_terminal_max_timeout
  // Puts each session in its resource group; null: process groups only, no limits.
  limits::LimitsManager* limits = nullptr;
  // Durable sessions: each session's command is held by a shim that outlives the daemon
  // (daemon/exec/shim_link.h). Absent: the daemon holds the command itself.
  std::optional<ShimConfig> shim;
};

// What adopting the sessions a previous daemon left found.
struct AdoptionReport {
  size_t adopted = 0;
  std::vector<std::string> lost;  // "session 1234: <why>", one per session that could not be adopted
  std::vector<std::shared_ptr<Session>> sessions;  // the adopted ones
  std::vector<std::string> degraded;  // adopted, but without something ("session 12: <what and why>")
};

// A wait in progress, so that the RPC can give up on it (client went away).
struct WaitTicket {
  int session_id = 0;
  Session::WaitId wait_id = 0;
};

class ExecEngine {
 public:
  using Done = std::function<void(Result<UnifiedOutcome>)>;

  ExecEngine(boost::asio::io_context& io, StoreLimits store_limits, EngineOptions options,
             ProcessStore::IdGenerator ids = {});

  // Spawns `launch`, stores the session before waiting (so a caller that goes away never
  // kills it), waits until `start + yield` or exit. An exit within the wait is reported inline
  // without a session id and the session is gone.
  std::optional<WaitTicket> exec(SessionMetadata metadata, const LaunchSpec& launch, Clock::time_point start,
                                 uint32_t yield_ms, uint32_t max_output_tokens, Done done);

  // write_stdin: bytes then wait (empty bytes = poll with Codex's clamps).
  std::optional<WaitTicket> write_stdin(const Requester& requester, int session_id, std::string chars,
                                        std::optional<uint32_t> yield_ms, uint32_t max_output_tokens, Done done);
  // Poll: returns at the first new output or exit, or after yield_ms (0: at once).
  // With `from_offset`: the stream from that offset instead of what is new (docs/api.md, Poll):
  // contiguous, at most 4*max_output_tokens bytes (and the poll buffer's size), also from a
  // session whose final result was already reported (ProcessStore::retire); OUT_OF_RANGE past
  // the stream's end.
  std::optional<WaitTicket> poll(const Requester& requester, int session_id, uint32_t yield_ms,
                                 uint32_t max_output_tokens, Done done,
                                 std::optional<uint64_t> from_offset = std::nullopt);
  void abandon(const WaitTicket& ticket);

  Status send_input(const Requester& requester, int session_id, std::string data);
  Status resize(const Requester& requester, int session_id, unsigned short rows, unsigned short cols);

  enum class CancelMode { kInterrupt, kTerminate, kKill };
  // Returns whether the process was still running.
  Result<bool> cancel(const Requester& requester, int session_id, CancelMode mode, std::chrono::milliseconds grace);

  Result<std::shared_ptr<Session>> find(const Requester& requester, int session_id) {
    return store_.find(session_id, requester);
  }
  std::vector<std::shared_ptr<Session>> list(const Requester& requester, bool all_users) const {
    return store_.list(requester, all_users);
  }
  size_t live_sessions() const { return store_.size(); }
  limits::LimitsManager* limits() const { return options_.limits; }
  uint64_t total_sessions() const { return store_.total_created(); }
  // Every byte the sessions of this daemon produced (live sessions' so far included).
  uint64_t total_output_bytes() const { return store_.total_output_bytes(); }
  size_t live_sessions_of(uid_t uid) const { return store_.count_for(uid); }
  uint64_t total_sessions_of(uid_t uid) const { return store_.created_by(uid); }

  // Shutdown: SIGKILL every session's group and reap (a durable session's shim does it and
  // ends). Returns how many shims had not ended within kShimEndWait.
  size_t kill_all();
  static constexpr std::chrono::milliseconds kShimEndWait{2000};
  // Shutdown that keeps sessions (a planned restart): durable sessions are left to their
  // shims; the others are killed. Returns how many were kept.
  size_t detach_all();
  // Start-up: reconnects to every shim in options.shim->sessions_dir and stores its session
  // under its old id. A session that cannot be adopted is reported (and its command ended
  // when its shim still runs), never fatal. The sandbox handover a shim keeps (the proxy
  // ports, the exec listener) goes to `channels` (null: nobody here; reported as degraded).
  AdoptionReport adopt_sessions(SandboxChannelSink* channels = nullptr);

 private:
  Result<std::shared_ptr<Session>> spawn_session(SessionMetadata metadata, const LaunchSpec& launch);
  Result<std::unique_ptr<limits::ResourceGroup>> adopt_group(const SessionRecord& record, const shim::ShimState& state);
  // What of the sandbox's handover a shim relays can be served again; why not, or "" when all is well.
  static std::string adopt_proxy(Session& session, const shim::ShimState& state, UniqueFd relay,
                                 SandboxChannelSink* channels);
  Result<std::shared_ptr<Session>> spawn_durable(SessionMetadata metadata, const LaunchSpec& launch,
                                                 posix::SpawnRequest request, const ChannelOwner& owner,
                                                 std::unique_ptr<limits::ResourceGroup> group);
  void on_collected(int session_id, Clock::time_point start, uint32_t max_output_tokens, bool reserved_only,
                    Collected collected, const Done& done);

  boost::asio::io_context& io_;
  EngineOptions options_;
  ProcessStore store_;
  std::unique_ptr<ShimPool> shim_pool_;  // durable sessions only; ends its waiting shims first
};

}  // namespace codexd::exec
