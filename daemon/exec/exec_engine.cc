#include "daemon/exec/exec_engine.h"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "base/shell_quote.h"
#include "daemon/exec/launch_spawn.h"
#include "daemon/exec/result_text.h"
#include "daemon/exec/session_record.h"
#include "daemon/exec/truncation.h"
#include "base/utf8.h"
#include "daemon/exec/yield_clamps.h"

namespace codexd::exec {

void render_text(UnifiedOutcome& outcome) {
  outcome.text = render_unified_exec_text({outcome.chunk_id, outcome.wall_time_seconds, outcome.exit_code,
                                           outcome.session_id, outcome.original_token_count, outcome.output,
                                           outcome.termination_note});
}


ExecEngine::ExecEngine(boost::asio::io_context& io, StoreLimits store_limits, EngineOptions options,
                       ProcessStore::IdGenerator ids)
    : io_(io), options_(options), store_(store_limits, std::move(ids)) {
  if (options_.shim) shim_pool_ = std::make_unique<ShimPool>(*options_.shim, kWaitingShims);
}

std::optional<WaitTicket> ExecEngine::exec(SessionMetadata metadata, const LaunchSpec& launch, Clock::time_point start,
                                           uint32_t yield_ms, uint32_t max_output_tokens, Done done) {
  // Room first: a session refused for the owner's limit is never spawned.
  if (Status room = store_.make_room(metadata.owner_uid, metadata.agent_id); !room.ok()) {
    done(room);
    return std::nullopt;
  }
  auto id = store_.reserve_id();
  if (!id.ok()) {
    done(id.status());
    return std::nullopt;
  }
  metadata.id = *id;
  auto spawned = spawn_session(std::move(metadata), launch);
  if (!spawned.ok()) {
    store_.release_id(*id);
    done(spawned.status());
    return std::nullopt;
  }
  auto session = *spawned;
  store_.insert(session);
  const int session_id = *id;
  auto wait_id = session->wait(WaitMode::kUntilDeadlineOrExit, start + std::chrono::milliseconds(yield_ms),
                               [this, session_id, start, max_output_tokens, done](Collected collected) {
                                 on_collected(session_id, start, max_output_tokens, false, std::move(collected), done);
                               });
  return WaitTicket{session_id, wait_id};
}

// The session's resource group first, so that the child joins it before it runs anything.
Result<std::shared_ptr<Session>> ExecEngine::spawn_session(SessionMetadata metadata, const LaunchSpec& launch) {
  CODEXD_ASSIGN_OR_RETURN(auto group, create_group(options_.limits, launch, std::to_string(metadata.id)));
  posix::SpawnRequest request = spawn_request(launch, launch.tty ? posix::StdioMode::kPty : posix::StdioMode::kPipesMerged);
  if (group) group->prepare(request);
  ChannelOwner owner{metadata.owner_uid, metadata.agent_id, metadata.id, shell_join(metadata.argv)};
  metadata.tty = launch.tty;
  metadata.sandbox = launch.sandbox;
  metadata.network = launch.network;
  std::shared_ptr<Session> session;
  if (options_.shim) {
    CODEXD_ASSIGN_OR_RETURN(session, spawn_durable(std::move(metadata), launch, std::move(request), owner, std::move(group)));
  } else {
    CODEXD_ASSIGN_OR_RETURN(LaunchedProcess launched, spawn_launch(launch, std::move(request), owner));
    session = Session::start(io_, std::move(metadata), std::move(launched.process), options_.session_limits, std::move(group));
    session->hold_until_exit(std::move(launched.keepalive));
  }
  if (launch.tty) session->set_terminal_size(launch.rows, launch.cols);
  return session;
}

namespace {

// Removes a session directory the daemon made (its record, the shim's socket), and itself.
void remove_session_dir(const std::string& dir) {
  for (const char* name : {kSessionRecordName, "session.json.new", "shim.sock"}) ::unlink((dir + "/" + name).c_str());
  ::rmdir(dir.c_str());
}

}  // namespace

// The record first (a daemon that dies right after the spawn still finds the session), then
// the shim, which spawns the command as its own child.
Result<std::shared_ptr<Session>> ExecEngine::spawn_durable(SessionMetadata metadata, const LaunchSpec& launch,
                                                           posix::SpawnRequest request, const ChannelOwner& owner,
                                                           std::unique_ptr<limits::ResourceGroup> group) {
  const std::string dir = options_.shim->sessions_dir + "/" + std::to_string(metadata.id);
  remove_session_dir(dir);  // a leftover of a session with the same id that ended while no daemon ran
  if (::mkdir(dir.c_str(), 0700) != 0) return ErrnoStatus("session directory " + dir, errno);
  SessionRecord record;
  record.metadata = metadata;
  record.rows = launch.rows;
  record.cols = launch.cols;
  if (group) {
    record.group_place = group->place();
    record.memory_max = group->effective().memory_max;
    record.pids_max = group->effective().pids_max;
  }
  if (Status written = write_session_record(dir, record); !written.ok()) {
    remove_session_dir(dir);
    return written;
  }
  std::shared_ptr<ShimLink> link;
  ShimPlacement placement;
  placement.sandboxed = launch.sandbox != sandbox::Backend::kNone;
  if (group) placement.join_fds = group->keeper_join_fds();  // beside the command, in its cgroup
  Spawner through_shim = [&](const posix::SpawnRequest& r, UniqueFd& proxy_channel) -> Result<posix::SpawnedProcess> {
    CODEXD_ASSIGN_OR_RETURN(StartedShim shim, shim_pool_->take());
    CODEXD_ASSIGN_OR_RETURN(link, ShimLink::launch(io_, std::move(shim), dir, r, options_.session_limits.attach_window_bytes,
                                                   placement, proxy_channel ? &proxy_channel : nullptr));
    posix::SpawnedProcess process;
    process.pid = link->pid();
    return process;
  };
  auto launched = spawn_launch(launch, std::move(request), owner, through_shim);
  if (!launched.ok()) {
    remove_session_dir(dir);
    return launched.status();
  }
  const bool input_open = launch.tty;
  auto session = Session::start_with_shim(io_, std::move(metadata), std::move(link), input_open,
                                          options_.session_limits, std::move(group));
  session->hold_until_exit(std::move(launched->keepalive));
  return session;
}

std::optional<WaitTicket> ExecEngine::write_stdin(const Requester& requester, int session_id, std::string chars,
                                                  std::optional<uint32_t> yield_ms, uint32_t max_output_tokens,
                                                  Done done) {
  const auto start = Clock::now();
  auto found = store_.find(session_id, requester);
  if (!found.ok()) {
    done(found.status());
    return std::nullopt;
  }
  auto session = *found;
  const bool empty = chars.empty();
  if (!empty) {
    if (!session->metadata().tty) {
      // A lone Ctrl-C on a pipe session interrupts the group; anything else cannot be delivered.
      if (chars == "\x03") {
        Status st = session->interrupt();
        if (!st.ok()) {
          done(st);
          return std::nullopt;
        }
      } else {
        done(FailedPrecondition("stdin is closed for this session; rerun exec_command with tty=true to keep stdin open"));
        return std::nullopt;
      }
    } else if (!session->has_exited()) {
      Status st = session->write_input(std::move(chars));
      if (!st.ok() && st.code() != StatusCode::kFailedPrecondition) {
        done(st);
        return std::nullopt;
      }
    }
  }
  const uint32_t yield = clamp_write_yield_ms(yield_ms, empty, options_.max_poll_ms);
  auto wait_id = session->wait(WaitMode::kUntilDeadlineOrExit, start + std::chrono::milliseconds(yield),
                               [this, session_id, start, max_output_tokens, done](Collected collected) {
                                 on_collected(session_id, start, max_output_tokens, false, std::move(collected), done);
                               });
  return WaitTicket{session_id, wait_id};
}

std::optional<WaitTicket> ExecEngine::poll(const Requester& requester, int session_id, uint32_t yield_ms,
                                           uint32_t max_output_tokens, Done done, std::optional<uint64_t> from_offset) {
  const auto start = Clock::now();
  auto found = store_.find(session_id, requester);
  if (!found.ok() && from_offset) {
    // Its final result may have been lost on the way: a re-read still finds it for a while.
    if (auto reported = store_.find_reported(session_id, requester)) found = reported;
  }
  if (!found.ok()) {
    done(found.status());
    return std::nullopt;
  }
  auto session = *found;
  std::optional<ReRead> reread;
  if (from_offset) {
    if (*from_offset > session->stream_offset()) {
      done(Status(StatusCode::kOutOfRange,
                  "from_offset " + std::to_string(*from_offset) + " is past the end of process id " +
                      std::to_string(session_id) + "'s output, which is at offset " +
                      std::to_string(session->stream_offset()) + " now"));
      return std::nullopt;
    }
    const uint64_t budget = std::min<uint64_t>(uint64_t{max_output_tokens} * 4, options_.session_limits.poll_buffer_bytes);
    reread = ReRead{*from_offset, static_cast<size_t>(budget)};
  }
  const uint32_t yield = clamp_poll_yield_ms(yield_ms, options_.max_poll_ms);
  auto wait_id = session->wait(
      WaitMode::kUntilActivity, start + std::chrono::milliseconds(yield),
      [this, session_id, start, max_output_tokens, done](Collected collected) {
        on_collected(session_id, start, max_output_tokens, false, std::move(collected), done);
      },
      reread);
  return WaitTicket{session_id, wait_id};
}

void ExecEngine::abandon(const WaitTicket& ticket) {
  auto found = store_.find(ticket.session_id, Requester{0, true});
  if (found.ok()) (*found)->cancel_wait(ticket.wait_id);
}

void ExecEngine::on_collected(int session_id, Clock::time_point start, uint32_t max_output_tokens, bool,
                              Collected collected, const Done& done) {
  UnifiedOutcome outcome;
  outcome.chunk_id = generate_chunk_id();
  outcome.wall_time_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  outcome.raw_output = utf8_lossy(collected.output);
  // Every byte the command wrote since the last call counts, also those the 1 MiB head+tail
  // buffer had to drop (Codex counts the untruncated output).
  outcome.original_token_count = (outcome.raw_output.size() + collected.omitted_bytes + 3) / 4;
  outcome.output = formatted_truncate_text(outcome.raw_output, max_output_tokens);
  outcome.output_offset = collected.output_offset;
  outcome.lost_bytes = collected.lost_bytes;
  if (collected.lost_bytes > 0) {
    outcome.warnings.push_back(std::to_string(collected.lost_bytes) + " bytes of output before offset " +
                               std::to_string(collected.output_offset - collected.output.size()) +
                               " are no longer retained and are missing here");
  }
  outcome.usage = collected.usage;
  outcome.sandbox = collected.sandbox;
  if (collected.exit) {
    // Reported once: the session is gone from now on ("Unknown process id N"), except for a
    // while to Poll.from_offset, which may re-read a final result that was lost.
    outcome.exit_code = collected.exit->exit_code;
    outcome.signal = collected.exit->signal;
    outcome.termination = collected.termination;
    outcome.termination_note = collected.termination_note;
    store_.retire(session_id);
  } else {
    outcome.session_id = session_id;
    std::string warning = store_.session_count_warning(collected.owner_uid);
    if (!warning.empty()) outcome.warnings.push_back(std::move(warning));
  }
  render_text(outcome);
  done(std::move(outcome));
}

Status ExecEngine::send_input(const Requester& requester, int session_id, std::string data) {
  CODEXD_ASSIGN_OR_RETURN(auto session, store_.find(session_id, requester));
  if (session->has_exited()) return FailedPrecondition("process id " + std::to_string(session_id) + " has exited");
  return session->write_input(std::move(data));
}

Status ExecEngine::resize(const Requester& requester, int session_id, unsigned short rows, unsigned short cols) {
  CODEXD_ASSIGN_OR_RETURN(auto session, store_.find(session_id, requester));
  return session->resize(rows, cols);
}

Result<bool> ExecEngine::cancel(const Requester& requester, int session_id, CancelMode mode,
                                std::chrono::milliseconds grace) {
  CODEXD_ASSIGN_OR_RETURN(auto session, store_.find(session_id, requester));
  const bool running = !session->has_exited();
  if (!running) return false;
  session->mark_cancelled();
  switch (mode) {
    case CancelMode::kInterrupt: {
      Status st = session->signal_all(SIGINT);
      if (!st.ok()) return st;
      break;
    }
    case CancelMode::kTerminate: session->terminate(grace); break;
    case CancelMode::kKill: session->kill(); break;
  }
  return true;
}

namespace {

// Waits until every pidfd is readable (its process ended) or the deadline passes; returns how
// many had not ended by then.
size_t wait_for_ends(const std::vector<UniqueFd>& ends, std::chrono::milliseconds within) {
  std::vector<int> pidfds;
  for (const UniqueFd& end : ends) pidfds.push_back(end.get());
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (!pidfds.empty()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    std::vector<pollfd> polled;
    for (int fd : pidfds) polled.push_back({fd, POLLIN, 0});
    if (::poll(polled.data(), polled.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    pidfds.clear();
    for (const auto& p : polled) {
      if (!(p.revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))) pidfds.push_back(p.fd);
    }
  }
  return pidfds.size();
}

}  // namespace

size_t ExecEngine::kill_all() {
  // Every shim is told first, then all are awaited together: a shutdown with many sessions
  // takes as long as the slowest shim, not their sum.
  auto sessions = store_.take_all();
  std::vector<UniqueFd> shims;
  for (auto& session : sessions) {
    if (UniqueFd end = session->shutdown_now(); end.valid()) shims.push_back(std::move(end));
  }
  return wait_for_ends(shims, kShimEndWait);
}

size_t ExecEngine::detach_all() {
  size_t kept = 0;
  for (auto& session : store_.take_all()) {
    if (session->durable()) {  // also a finished one: its shim still holds the exit for the owner
      session->detach_for_restart();
      ++kept;
    } else {
      session->shutdown_now();
    }
  }
  return kept;
}

// The cgroup the previous daemon made for the session (accounting, limits notes, whole-tree
// kill), else its process group.
Result<std::unique_ptr<limits::ResourceGroup>> ExecEngine::adopt_group(const SessionRecord& record,
                                                                      const shim::ShimState& state) {
  if (!options_.limits) return std::unique_ptr<limits::ResourceGroup>();
  limits::AdoptedGroup adopted;
  adopted.agent = record.metadata.agent_id;
  adopted.place = record.group_place;
  // A leader the daemon told the shim to reap may have a reused pid: not signalled any more.
  adopted.leader = state.reaped ? -1 : state.pid;
  adopted.effective.memory_max = record.memory_max;
  adopted.effective.pids_max = record.pids_max;
  return options_.limits->adopt(adopted);
}

std::string ExecEngine::adopt_proxy(Session& session, const shim::ShimState& state, UniqueFd relay,
                                    SandboxChannelSink* channels) {
  const SessionMetadata& m = session.metadata();
  if (relay.valid()) {
    if (channels == nullptr) {
      return "adopted without its sandbox channel (neither the network proxy nor exec supervision runs in this daemon)";
    }
    session.hold_until_exit(
        channels->accept_channel(std::move(relay), {m.owner_uid, m.agent_id, m.id, shell_join(m.argv), /*adopted=*/true}));
    return "";
  }
  // A shim of protocol 2 on relays the ports for as long as the command runs; an older one
  // never kept them, so the command's new connections fail.
  if (m.network == sandbox::NetworkMode::kProxy && state.protocol < 2 && !state.exit) {
    return "adopted without its network proxy (its shim speaks protocol " + std::to_string(state.protocol) +
           ", which does not keep the proxy ports; new connections of the command fail)";
  }
  return "";
}

AdoptionReport ExecEngine::adopt_sessions(SandboxChannelSink* channels) {
  AdoptionReport report;
  if (!options_.shim) return report;
  const std::string& base = options_.shim->sessions_dir;
  std::vector<std::string> names;
  if (DIR* dir = ::opendir(base.c_str())) {
    while (dirent* entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        names.push_back(name);
      }
    }
    ::closedir(dir);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string dir = base + "/" + name;
    auto lose = [&](const std::string& why) { report.lost.push_back("session " + name + ": " + why); };
    shim::ShimState state;
    UniqueFd proxy_relay;
    auto link = ShimLink::reconnect(io_, dir, state, &proxy_relay);
    if (!link.ok()) {
      if (link.status().code() == StatusCode::kUnavailable) {
        lose(link.status().message());  // another daemon holds it: leave it alone
        continue;
      }
      lose("its shim is gone (" + link.status().message() + "); the command ended with it");
      remove_session_dir(dir);
      continue;
    }
    auto record = read_session_record(dir);
    if (!record.ok() || std::to_string(record->metadata.id) != name) {
      // Nobody could own it: its command is ended rather than left running unowned.
      lose((record.ok() ? "record names another id" : record.status().message()) + "; its command was ended");
      (*link)->release();
      continue;
    }
    const bool tty = record->metadata.tty;
    auto group = adopt_group(*record, state);
    if (!group.ok()) report.degraded.push_back("session " + name + ": adopted without its resource group (" + group.status().message() + ")");
    auto session = Session::start_with_shim(io_, std::move(record->metadata), *link, state.input_open,
                                            options_.session_limits, group.ok() ? std::move(*group) : nullptr, &state);
    // The terminal's size now (the shim asks it), else as the session started.
    if (tty) {
      session->set_terminal_size(state.rows > 0 ? state.rows : record->rows, state.cols > 0 ? state.cols : record->cols);
    }
    if (Status adopted = store_.adopt(session); !adopted.ok()) {
      lose(adopted.message());
      continue;
    }
    if (std::string why = adopt_proxy(*session, state, std::move(proxy_relay), channels); !why.empty()) {
      report.degraded.push_back("session " + name + ": " + why);
    }
    ++report.adopted;
    report.sessions.push_back(session);
  }
  return report;
}

}  // namespace codexd::exec
