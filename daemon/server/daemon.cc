// The composition root. Daemon::start runs the start-up steps in order, each a function below:
//
//   ignore_sigpipe -> probe_sandbox -> load_policy -> open_audit -> open_listener
//   -> build_core (engine, broker, cache, orchestrator, runner) -> start_core_thread
//   -> build_services -> start_grpc -> start_acceptor -> announce
//
// and Daemon::wait shuts down in the order of docs/architecture.md ("Shutdown").
#include "daemon/server/daemon.h"

#include <grp.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <utility>
#include <cstring>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <optional>
#include <cstdio>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/thread_pool.hpp>
#include <condition_variable>
#include <future>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/server_posix.h>
#include <mutex>
#include <spdlog/spdlog.h>
#include <thread>

#include "daemon/exec/exec_engine.h"
#include "daemon/orchestrator/approval_broker.h"
#include "daemon/orchestrator/approval_cache.h"
#include "daemon/orchestrator/approval_store.h"
#include "daemon/orchestrator/audit_log.h"
#include "daemon/orchestrator/command_runner.h"
#include "daemon/orchestrator/identity.h"
#include "daemon/orchestrator/launch_builder.h"
#include "daemon/orchestrator/orchestrator.h"
#include "daemon/orchestrator/policy_store.h"
#include "daemon/orchestrator/private_tmp.h"
#include "daemon/server/admin_service.h"
#include "daemon/server/approvals_service.h"
#include "daemon/server/exec_service.h"
#include "daemon/server/guarded_relay.h"
#include "daemon/server/io_thread.h"
#include "daemon/server/log_throttle.h"
#include "daemon/server/memory_trim.h"
#include "daemon/server/metrics_endpoint.h"
#include "daemon/server/metrics_report.h"
#include "daemon/server/protobuf_log.h"
#include "daemon/server/rpc_log.h"
#include "daemon/server/network_plane.h"
#include "daemon/server/sandbox_channels.h"
#include "daemon/server/peer_registry.h"
#include "daemon/server/policy_service.h"
#include "daemon/server/sandbox_service.h"
#include "daemon/server/server_context.h"
#include "daemon/server/shutdown_watch.h"
#include "daemon/server/unix_listener.h"
#include "policies/amend.h"
#include "platform/backends/limits_factory.h"
#include "platform/backends/manager_factory.h"
#include "platform/posix/death_watch.h"
#include "platform/posix/process_image.h"
#include "platform/sandbox/format.h"

#ifdef __linux__
#include "platform/linux/peer_namespaces.h"
#endif
#ifdef CODEXD_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace codexd::server {
namespace {

using IsAdmin = std::function<bool(uid_t)>;

void notify_systemd([[maybe_unused]] const std::string& state) {
#ifdef CODEXD_HAVE_SYSTEMD
  sd_notify(0, state.c_str());
#endif
}

bool is_system_mode(const config::Config& config) { return config.daemon.mode == config::DaemonMode::kSystem; }

// Requesters review their own commands; configured uids, a reviewer group and admins review all.
class ConfiguredReviewers : public orchestrator::ReviewerPolicy {
 public:
  ConfiguredReviewers(std::vector<uid_t> uids, std::optional<gid_t> group, IsAdmin is_admin)
      : uids_(std::move(uids)), group_(group), is_admin_(std::move(is_admin)) {}
  bool may_review(uid_t reviewer, const orchestrator::ApprovalTicket& ticket) const override {
    if (reviewer == ticket.requester_uid || is_admin_(reviewer)) return true;
    if (std::find(uids_.begin(), uids_.end(), reviewer) != uids_.end()) return true;
    return group_ && orchestrator::uid_in_group(reviewer, *group_);
  }

 private:
  std::vector<uid_t> uids_;
  std::optional<gid_t> group_;
  IsAdmin is_admin_;
};

// ---- sandbox, policy, audit ------------------------------------------------------------------

// A client that goes away mid-write must not kill the daemon.
void ignore_sigpipe() { ::signal(SIGPIPE, SIG_IGN); }

// Probe once, report what works.
std::unique_ptr<sandbox::SandboxManager> probe_sandbox(const config::Config& config) {
  sandbox::SandboxManagerOptions options;
  options.preference = config.sandbox.backend;
  options.helper_path = config.sandbox.helper_path;
  auto manager = sandbox::create_sandbox_manager(options);
  for (const auto& line : manager->capabilities().warnings) spdlog::warn("sandbox: {}", line);
  spdlog::info("sandbox: {}", sandbox::format_capability_report(manager->capabilities()));
  return manager;
}

// All files or nothing. System mode fails closed: without the administrator's rules (forbidden
// ones included) it does not serve. User mode starts with an empty policy and reports the
// errors (GetStatus, logs) until the files are fixed and reloaded.
Result<std::unique_ptr<orchestrator::PolicyStore>> load_policy(const config::Config& config,
                                                                const std::string& default_rules) {
  const bool system_mode = is_system_mode(config);
  auto store = std::make_unique<orchestrator::PolicyStore>(default_rules, config.policy.rules_dirs, system_mode);
  auto loaded = store->reload();
  if (loaded.ok) {
    spdlog::info("policy: {} rules from {} files", store->state().rule_count, store->state().files.size());
    return store;
  }
  std::string all;
  for (const auto& e : loaded.errors) {
    spdlog::error("policy not loaded: {}", e);
    all += "\n  " + e;
  }
  if (system_mode) return FailedPrecondition("the rules do not load (system mode does not start without them):" + all);
  return store;
}

// This daemon's cgroup tree is named after its socket, so that daemons on other sockets (tests,
// per-user daemons) never touch each other's groups, while a restart on the same socket finds
// and clears what its predecessor left.
std::string limits_instance(const std::string& socket_path) {
  uint32_t hash = 2166136261u;  // FNV-1a
  for (unsigned char c : socket_path) hash = (hash ^ c) * 16777619u;
  char text[16];
  std::snprintf(text, sizeof text, "%08x", hash);
  return std::string("codexd-") + text;
}

Result<std::unique_ptr<limits::LimitsManager>> open_limits(const config::LimitsSection& section,
                                                           const std::string& socket_path, bool system_mode,
                                                           bool durable_sessions) {
  limits::LimitsOptions options;
  // The groups of sessions a previous daemon left to their shims stay (they are adopted).
  options.keep_populated_groups = durable_sessions;
  options.instance = limits_instance(socket_path);
  options.daemon_memory_min = section.daemon_memory_min;
  using Scope = limits::LimitsOptions::SystemdScope;
  switch (system_mode ? config::LimitsSection::SystemdScope::kNever : section.systemd_scope) {
    case config::LimitsSection::SystemdScope::kAuto: options.systemd_scope = Scope::kIfNotWritable; break;
    case config::LimitsSection::SystemdScope::kAlways: options.systemd_scope = Scope::kAlways; break;
    case config::LimitsSection::SystemdScope::kNever: options.systemd_scope = Scope::kNever; break;
  }
  switch (section.mechanism) {
    case config::LimitsMechanism::kAuto: options.preference = limits::MechanismPreference::kAuto; break;
    case config::LimitsMechanism::kCgroup: options.preference = limits::MechanismPreference::kCgroup; break;
    case config::LimitsMechanism::kRlimit: options.preference = limits::MechanismPreference::kRlimit; break;
    case config::LimitsMechanism::kNone: options.preference = limits::MechanismPreference::kNone; break;
  }
  CODEXD_ASSIGN_OR_RETURN(auto manager, limits::create_limits_manager(options));
  const auto& status = manager->status();
  for (const auto& w : status.warnings) spdlog::warn("limits: {}", w);
  spdlog::info("limits: {} ({}){}", limits::mechanism_name(status.mechanism), status.reason,
               status.root.empty() ? "" : ", groups under " + status.root);
  return manager;
}

Result<std::unique_ptr<orchestrator::AuditLog>> open_audit(const config::AuditSection& audit) {
  return orchestrator::AuditLog::open(audit.log_file, audit.journald);
}

// ---- the socket ------------------------------------------------------------------------------

struct Listener {
  UniqueFd fd;
  std::string socket_path;       // the socket that really serves: reported, and hidden from commands
  bool owns_socket_file = true;  // false when systemd passed it (systemd removes it)
};

// The path a listening Unix socket is bound to; "" when it has none (abstract, unnamed).
std::string bound_path(int fd) {
  sockaddr_un bound{};
  socklen_t length = sizeof bound;
  const socklen_t path_offset = offsetof(sockaddr_un, sun_path);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0 || bound.sun_family != AF_UNIX ||
      length <= path_offset || bound.sun_path[0] != '/') {
    return {};
  }
  return std::string(bound.sun_path, ::strnlen(bound.sun_path, length - path_offset));
}

// systemd socket activation: serve the socket we were given.
Listener adopt_inherited_socket(int fd, std::string configured_path) {
  Listener l{UniqueFd(fd), std::move(configured_path), false};
  spdlog::info("using the listening socket passed by systemd (fd {})", fd);
  std::string passed = bound_path(fd);
  if (!passed.empty() && passed != l.socket_path) {
    spdlog::warn("systemd passed {} but daemon.listen names {}: serving and masking {}", passed, l.socket_path, passed);
    l.socket_path = passed;
  }
  return l;
}

Result<Listener> create_socket(const config::Config& config, std::string path) {
  const bool system_mode = is_system_mode(config);
  SocketOptions options;
  options.path = path;
  options.socket_mode = config.daemon.socket_mode ? config.daemon.socket_mode : (system_mode ? 0660 : 0600);
  options.dir_mode = config.daemon.socket_dir_mode ? config.daemon.socket_dir_mode : (system_mode ? 0750 : 0700);
  if (system_mode) {
    options.group = orchestrator::group_id(config.daemon.socket_group);
    if (!options.group) spdlog::warn("group {} does not exist: only root can connect to {}", config.daemon.socket_group, path);
  }
  CODEXD_ASSIGN_OR_RETURN(UniqueFd fd, open_listening_socket(options));
  return Listener{std::move(fd), std::move(path), true};
}

// A restart in place: the previous image of this daemon passed its own socket on.
Listener adopt_own_socket(int fd, std::string configured_path) {
  std::string bound = bound_path(fd);
  if (!bound.empty() && bound != configured_path) {
    spdlog::warn("daemon.listen now names {}, but a restart in place keeps serving {}; stop and start to move it",
                 configured_path, bound);
  }
  spdlog::info("serving the listening socket kept across the restart (fd {})", fd);
  return Listener{UniqueFd(fd), bound.empty() ? std::move(configured_path) : std::move(bound), true};
}

// The socket, before any thread starts serving.
Result<Listener> open_listener(const config::Config& config, int inherited_fd, bool inherited_owned) {
  if (inherited_fd >= 0 && inherited_owned) return adopt_own_socket(inherited_fd, config::socket_path(config));
  if (inherited_fd >= 0) return adopt_inherited_socket(inherited_fd, config::socket_path(config));
  return create_socket(config, config::socket_path(config));
}

// ---- the core: sessions, approvals, orchestration, all on one io thread ---------------------

struct Core {
  std::unique_ptr<orchestrator::ApprovalStore> approval_store;  // before the broker and cache that use it
  std::unique_ptr<exec::ExecEngine> engine;
  std::unique_ptr<orchestrator::ApprovalBroker> broker;
  std::unique_ptr<orchestrator::ApprovalCache> cache;
  std::shared_ptr<orchestrator::ExecSupervisor> exec_supervisor;
  std::shared_ptr<exec::SandboxChannelSink> sandbox_channels;  // proxy ports and exec listeners
  std::shared_ptr<orchestrator::PrivateTmpStore> private_tmp;
  std::unique_ptr<orchestrator::LaunchBuilder> launches;
  std::unique_ptr<orchestrator::Orchestrator> orchestrator;
  std::unique_ptr<orchestrator::CommandRunner> runner;
};

// The installed codexd-shim (or the build tree's) unless exec.shim_path names one.
std::string shim_path(const config::ExecSection& exec) {
  if (!exec.shim_path.empty()) return exec.shim_path;
  return posix::companion_program_path("codexd-shim");
}

// Durable sessions: <state_dir>/sessions, made 0700 (the daemon's alone; the shims' sockets
// live there). Absent (with the reason logged) where shims cannot be used.
std::optional<exec::ShimConfig> shim_config(const config::Config& config) {
#if defined(__linux__)
  if (!config.exec.durable_sessions) return std::nullopt;
  exec::ShimConfig shim{shim_path(config.exec), config::state_dir(config) + "/sessions"};
  if (::access(shim.shim_path.c_str(), X_OK) != 0) {
    spdlog::warn("sessions: {} is not executable; sessions are not durable", shim.shim_path);
    return std::nullopt;
  }
  // The state directory 0755 (users traverse it to their private /tmp), sessions/ 0700.
  for (const auto& [dir, mode] : {std::pair{config::state_dir(config), 0755}, std::pair{shim.sessions_dir, 0700}}) {
    if (::mkdir(dir.c_str(), static_cast<mode_t>(mode)) != 0 && errno != EEXIST) {
      spdlog::warn("sessions: cannot make {}: {}; sessions are not durable", dir, std::strerror(errno));
      return std::nullopt;
    }
  }
  struct stat st {};
  if (::lstat(shim.sessions_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & 077) != 0) {
    spdlog::warn("sessions: {} must be a directory of uid {} with mode 0700; sessions are not durable",
                 shim.sessions_dir, ::geteuid());
    return std::nullopt;
  }
  return shim;
#else
  (void)config;
  return std::nullopt;
#endif
}

std::unique_ptr<exec::ExecEngine> make_engine(boost::asio::io_context& io, const config::Config& config,
                                              limits::LimitsManager* limits, std::optional<exec::ShimConfig> shim) {
  const config::ExecSection& exec = config.exec;
  exec::StoreLimits store_limits;
  store_limits.max_sessions = exec.max_sessions;
  store_limits.max_sessions_per_agent = exec.max_sessions_per_agent;
  store_limits.max_sessions_total = exec.max_sessions_total;
  exec::EngineOptions options;
  options.max_poll_ms = exec.background_terminal_max_timeout_ms;
  options.session_limits.poll_buffer_bytes = exec.session_output_bytes;
  options.session_limits.attach_window_bytes = exec.attach_window_bytes;
  options.limits = limits;
  options.shim = std::move(shim);
  return std::make_unique<exec::ExecEngine>(io, store_limits, options);
}

std::unique_ptr<orchestrator::ApprovalBroker> make_broker(boost::asio::io_context& io,
                                                          const config::ApprovalsSection& approvals, IsAdmin is_admin) {
  std::optional<gid_t> reviewer_group;
  if (!approvals.reviewer_group.empty()) {
    reviewer_group = orchestrator::group_id(approvals.reviewer_group);
    if (!reviewer_group) spdlog::warn("approvals.reviewer_group {} does not exist", approvals.reviewer_group);
  }
  orchestrator::BrokerOptions options;
  options.timeout = std::chrono::milliseconds(approvals.timeout_ms);
  options.reject_without_reviewer = approvals.reject_without_reviewer;
  options.max_pending_per_uid = approvals.max_pending_per_uid;
  options.max_pending = approvals.max_pending;
  return std::make_unique<orchestrator::ApprovalBroker>(
      io, options, std::make_shared<ConfiguredReviewers>(approvals.reviewer_uids, reviewer_group, std::move(is_admin)));
}

// "Approve and remember": `append` writes the rule, then the policy reloads, off the core
// thread; `then` runs on the core thread either way.
// Pending approvals and approved-for-session grants a previous daemon saved in the state
// directory; from here on both save every change there. A file that cannot be used is moved
// aside and the daemon starts with none (never a refusal to start). The audit log gets one
// record when there was a file (what was restored) and one when it was unusable.
void restore_approvals(const config::Config& config, Core& core, orchestrator::AuditLog& audit) {
  core.approval_store = std::make_unique<orchestrator::ApprovalStore>(config::state_dir(config));
  orchestrator::ApprovalStore& store = *core.approval_store;
  auto loaded = store.load();
  orchestrator::ApprovalStateAuditRecord record;
  record.state_file = store.path();
  if (!loaded.ok()) {
    spdlog::error("cannot read the saved approvals ({}); starting with none", loaded.status().message());
  } else if (!loaded->corrupt_reason.empty()) {
    orchestrator::ApprovalStateAuditRecord corrupt = record;
    corrupt.event = orchestrator::ApprovalStateAuditRecord::Event::kCorrupt;
    corrupt.reason = loaded->corrupt_reason;
    corrupt.moved_to = loaded->moved_to;
    audit.record(corrupt);
  }
  core.broker->set_store(&store);
  core.cache->set_store(&store);
  if (loaded.ok()) {
    auto restored = core.broker->restore(std::move(loaded->state.approvals));
    record.pending = restored.pending;
    record.resolved = restored.resolved;
    record.timed_out = restored.timed_out;
    record.grants = core.cache->restore(loaded->state.grants);
  }
  if (!loaded.ok() || !loaded->found) return;  // a first start: nothing to restore or record
  audit.record(record);
  spdlog::info("approval state {}: restored {} pending approval(s), {} resolved awaiting their requester ({} expired "
               "while the daemon was down), {} approved-for-session grant(s)",
               store.path(), record.pending, record.resolved, record.timed_out, record.grants);
}

using RuleAppender = std::function<void(std::function<Status()> append, std::function<void()> then)>;
RuleAppender make_rule_appender(boost::asio::thread_pool& blocking, boost::asio::io_context& io,
                                orchestrator::PolicyStore& policies) {
  return [&blocking, &io, &policies](std::function<Status()> append, std::function<void()> then) {
    boost::asio::post(blocking, [&io, &policies, append = std::move(append), then = std::move(then)]() mutable {
      Status appended = append();
      if (!appended.ok()) {
        spdlog::warn("could not remember the approval: {}", appended.message());
      } else if (auto reloaded = policies.reload(); !reloaded.ok) {
        for (const auto& e : reloaded.errors) spdlog::error("policy reload after an amendment failed: {}", e);
      }
      boost::asio::post(io, std::move(then));
    });
  };
}

using AmendPolicy = decltype(orchestrator::OrchestratorDeps::amend_policy);
AmendPolicy make_amender(const RuleAppender& appender, std::string amend_file) {
  return [appender, amend_file = std::move(amend_file)](std::vector<std::string> prefix, std::function<void()> then) {
    appender([amend_file, prefix = std::move(prefix)] { return policy::append_allow_prefix_rule(amend_file, prefix); },
             std::move(then));
  };
}

using RememberHost = decltype(orchestrator::NetworkDeciderDeps::remember);
RememberHost make_host_amender(const RuleAppender& appender, std::string amend_file) {
  return [appender, amend_file = std::move(amend_file)](std::string host, std::string protocol, std::function<void()> then) {
    appender([amend_file, host = std::move(host), protocol = std::move(protocol)] {
      return policy::append_allow_network_rule(amend_file, host, protocol);
    }, std::move(then));
  };
}

}  // namespace

struct Daemon::Impl {
  config::Config config;
  DaemonOptions options;
  std::chrono::steady_clock::time_point started_at = std::chrono::steady_clock::now();
  std::chrono::system_clock::time_point started_at_wall = std::chrono::system_clock::now();
  std::string socket_path;
  bool owns_socket_file = true;

  boost::asio::io_context io;  // the core thread's
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> core_work;
  std::thread core_thread;
  boost::asio::thread_pool blocking{1};
  boost::asio::signal_set signals{io};
  MemoryTrimmer trimmer{io};  // core thread

  std::unique_ptr<sandbox::SandboxManager> sandbox;
  std::unique_ptr<limits::LimitsManager> limits;  // outlives the core (groups refer to it)
  UniqueFd death_watch;  // sessions without shims: closed when the daemon is gone (posix/death_watch.h)
  std::unique_ptr<orchestrator::PolicyStore> policies;
  std::unique_ptr<orchestrator::AuditLog> audit;
  std::unique_ptr<NetworkPlane> network;  // before `core`: sessions hold its leases
  Core core;

  PeerRegistry peers;
  LiveStreams streams;
  CoreContext context{&io, &peers, [this](uid_t uid) { return is_admin(uid); }, &streams};
  std::unique_ptr<ExecService> exec_service;
  std::unique_ptr<ApprovalsService> approvals_service;
  std::unique_ptr<PolicyService> policy_service;
  std::unique_ptr<AdminService> admin_service;
  std::unique_ptr<SandboxService> sandbox_service;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<Acceptor> acceptor;
  // Between each accepted connection and gRPC; made first, so that the metrics can refer to it.
  std::unique_ptr<GuardedRelays> relays = std::make_unique<GuardedRelays>();
  std::unique_ptr<MetricsEndpoint> metrics;  // [metrics] listen; null: off

  std::mutex mutex;
  std::condition_variable cv;
  bool shutdown_requested = false;
  bool restart_requested = false;           // this stop is a restart in place (under `mutex`)
  std::atomic<bool> keep_sessions = false;  // this stop leaves durable sessions to the next daemon
  std::optional<RestartHandover> handover;  // set by wait() for a restart in place

  Impl(config::Config c, DaemonOptions o) : config(std::move(c)), options(std::move(o)) {}

  bool is_admin(uid_t uid) const {
    if (uid == 0 || uid == ::geteuid()) return true;
    return std::find(config.daemon.admin_uids.begin(), config.daemon.admin_uids.end(), uid) != config.daemon.admin_uids.end();
  }

  // start-up steps that need the whole daemon
  void build_core();
  void start_core_thread();
  void build_services();
  Status start_grpc();
  Status start_metrics();
  void start_acceptor(UniqueFd listener);
  void announce() const;
  // shutdown
  void stop_core_thread();

  void request_shutdown() {
    std::lock_guard lock(mutex);
    shutdown_requested = true;
    cv.notify_all();
  }
  // A stop already under way wins: it is not turned into a restart.
  void request_restart() {
    std::lock_guard lock(mutex);
    if (shutdown_requested) return;
    restart_requested = true;
    keep_sessions = true;
    shutdown_requested = true;
    cv.notify_all();
  }
  // Reads the files the new image will read: on the blocking pool, never the core thread.
  Status check_restart_ready(size_t live_sessions) const {
    return check_restart(RestartCheckInput{options.restart, options.config_path, &config, options.default_rules,
                                           live_sessions});
  }
  void restart_from_signal();
  void reload_from_signal();
  void watch_signals();
  void adopt_sessions();
  struct {
    size_t adopted = 0;
    std::vector<std::string> lost;
  } adoption;  // what adopt_sessions() found, for GetStatus
};

// Before anything is served: the sessions a previous daemon left to their shims.
void Daemon::Impl::adopt_sessions() {
  const auto began = std::chrono::steady_clock::now();
  exec::AdoptionReport report = core.engine->adopt_sessions(core.sandbox_channels.get());
  const auto took_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
  for (const auto& lost : report.lost) spdlog::warn("sessions: not adopted: {}", lost);
  for (const auto& degraded : report.degraded) spdlog::warn("sessions: {}", degraded);
  adoption = {report.adopted, report.lost};
  // An adopted session may use its agent's private /tmp: it is not removed under it.
  if (core.private_tmp) {
    for (const auto& session : report.sessions) {
      const auto& m = session->metadata();
      session->hold_until_exit(std::make_shared<std::shared_ptr<const void>>(core.private_tmp->lease(
          orchestrator::PrivateTmpStore::path_in(core.private_tmp->options().base, m.owner_uid, m.agent_id))));
    }
  }
  if (report.adopted > 0 || !report.lost.empty()) {
    spdlog::info("sessions: adopted {} session(s) from the previous daemon in {:.1f} ms, {} lost", report.adopted, took_ms,
                 report.lost.size());
    audit->record(orchestrator::DaemonAuditRecord{
        "restart", "adopted " + std::to_string(report.adopted) + " session(s), " + std::to_string(report.lost.size()) + " lost"});
  }
}

// Sessions without shims are the daemon's children: a SIGKILL of the daemon signals only
// their leaders (PR_SET_PDEATHSIG). A watcher that outlives the daemon kills the rest.
UniqueFd watch_for_daemon_death(const limits::LimitsManager& limits) {
  const std::string kill_file = limits.kill_file();
  if (kill_file.empty()) {
    spdlog::warn("sessions: not durable, and no cgroup.kill: if the daemon is killed (SIGKILL), only each "
                 "session's leader is signalled");
    return {};
  }
  Result<UniqueFd> watch = posix::start_death_watch(kill_file);
  if (!watch.ok()) {
    spdlog::warn("sessions: not durable, and {}: if the daemon is killed (SIGKILL), only each session's leader "
                 "is signalled", watch.status().to_string());
    return {};
  }
  spdlog::info("sessions: not durable; if the daemon is killed, a watcher kills them all ({})", kill_file);
  return std::move(watch).value();
}

void Daemon::Impl::build_core() {
  std::optional<exec::ShimConfig> shim = shim_config(config);
  if (!shim) death_watch = watch_for_daemon_death(*limits);
  core.engine = make_engine(io, config, limits.get(), std::move(shim));
  core.broker = make_broker(io, config.approvals, context.is_admin);
  core.cache = std::make_unique<orchestrator::ApprovalCache>(config.approvals.session_cache_entries);
  restore_approvals(config, core, *audit);
  RuleAppender appender = make_rule_appender(blocking, io, *policies);
  const std::string& amend_file = config.policy.amend_file;
  network = std::make_unique<NetworkPlane>(
      orchestrator::NetworkDeciderDeps{&io, &config, policies.get(), core.broker.get(),
                                       amend_file.empty() ? RememberHost{} : make_host_amender(appender, amend_file)},
      audit.get());
  core.exec_supervisor = std::make_shared<orchestrator::ExecSupervisor>(
      orchestrator::ExecSupervisorDeps{&io, &config, policies.get(), core.broker.get(), audit.get()});
  core.sandbox_channels = make_sandbox_channels(io, network->channels(), core.exec_supervisor);
  core.launches = std::make_unique<orchestrator::LaunchBuilder>(orchestrator::LaunchBuilderDeps{
      &config, sandbox.get(), exec::current_process_environment(), socket_path.substr(0, socket_path.rfind('/')),
      core.sandbox_channels, /*private_tmp=*/nullptr});
  if (config.sandbox.private_tmp) {
    core.private_tmp = std::make_shared<orchestrator::PrivateTmpStore>(
        io, blocking,
        orchestrator::PrivateTmpOptions{core.launches->private_tmp_base(), core.launches->system_mode(),
                                        config.sandbox.private_tmp_grace_ms});
    core.private_tmp->adopt_leftovers();
    core.launches->set_private_tmp(core.private_tmp);
  }
  orchestrator::OrchestratorDeps deps;
  deps.config = &config;
  deps.policies = policies.get();
  deps.launches = core.launches.get();
  deps.broker = core.broker.get();
  deps.cache = core.cache.get();
  if (!amend_file.empty()) deps.amend_policy = make_amender(appender, amend_file);
  core.orchestrator = std::make_unique<orchestrator::Orchestrator>(std::move(deps));
  core.runner = std::make_unique<orchestrator::CommandRunner>(io, *core.orchestrator, *core.engine, *audit);
  adopt_sessions();
}

void Daemon::Impl::start_core_thread() {
  core_work.emplace(io.get_executor());
  network->start();
  signals.add(SIGTERM);
  signals.add(SIGINT);
  signals.add(SIGHUP);
  signals.add(SIGUSR1);
  signals.add(SIGUSR2);
  watch_signals();
  trimmer.start();
  core_thread = std::thread([this] { run_until_stopped(io, "core"); });
}

// Each service gets the core context and only the parts it uses.
void Daemon::Impl::build_services() {
  const bool system_mode = is_system_mode(config);
  auto may_run_commands = [system_mode](uid_t uid) { return system_mode || uid == ::geteuid() || uid == 0; };
  exec_service = std::make_unique<ExecService>(context, ExecDeps{.config = &config,
                                                                  .engine = core.engine.get(),
                                                                  .runner = core.runner.get(),
                                                                  .may_run_commands = may_run_commands,
                                                                  .supervisor = core.exec_supervisor.get()});
  approvals_service = std::make_unique<ApprovalsService>(context, *core.broker);
  policy_service = std::make_unique<PolicyService>(context, PolicyDeps{.config = &config, .policies = policies.get()});
  admin_service = std::make_unique<AdminService>(
      context, AdminDeps{.config = &config,
                         .engine = core.engine.get(),
                         .broker = core.broker.get(),
                         .policies = policies.get(),
                         .sandbox = sandbox.get(),
                         .limits = limits.get(),
                         .blocking = &blocking,
                         .network = network.get(),
                         .private_tmp = core.private_tmp.get(),
                         .facts = {system_mode ? "system" : "user", socket_path, options.config_path, started_at,
                                   started_at_wall, adoption.adopted, adoption.lost},
                         .restart = {.executable = options.restart.executable,
                                     .check = [this](size_t live) { return check_restart_ready(live); },
                                     .begin = [this] { request_restart(); }}});
  sandbox_service = std::make_unique<SandboxService>(
      context, SandboxDeps{
                   .config = &config, .sandbox = sandbox.get(), .launches = core.launches.get(), .limits = limits.get()});
}

// The scrape's figures come from the core thread: the endpoint's thread posts there and gets
// the text back, never blocking either thread.
Status Daemon::Impl::start_metrics() {
  if (config.metrics.listen.empty()) return Status::Ok();
  CODEXD_ASSIGN_OR_RETURN(config::MetricsAddress address, config::parse_metrics_listen(config.metrics.listen));
  MetricsSources sources{.version = CODEXD_VERSION,
                         .mode = is_system_mode(config) ? "system" : "user",
                         .started_at = started_at,
                         .engine = core.engine.get(),
                         .broker = core.broker.get(),
                         .runner = core.runner.get(),
                         .policies = policies.get(),
                         .network = network.get(),
                         .limits = limits.get(),
                         .relays = relays.get(),
                         .supervisor = core.exec_supervisor.get(),
                         .streams = &streams};
  auto gather = [this, sources](std::function<void(std::string)> reply) {
    boost::asio::post(io, [sources, reply = std::move(reply)] { reply(metrics_report(sources)); });
  };
  CODEXD_ASSIGN_OR_RETURN(metrics, MetricsEndpoint::start(address, std::move(gather)));
  spdlog::info("metrics: serving GET /metrics on {}", metrics->description());
  return Status::Ok();
}

// No listening port of its own: connections arrive from our acceptor.
Status Daemon::Impl::start_grpc() {
  route_protobuf_log_to_spdlog();
  route_grpc_log_to_spdlog();
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.RegisterService(exec_service.get());
  builder.RegisterService(approvals_service.get());
  builder.RegisterService(policy_service.get());
  builder.RegisterService(admin_service.get());
  builder.RegisterService(sandbox_service.get());
  if (spdlog::should_log(spdlog::level::debug)) {
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
    interceptors.push_back(make_rpc_log_interceptor_factory(&peers));
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
  }
  builder.SetMaxReceiveMessageSize(8 * 1024 * 1024);
  builder.SetMaxSendMessageSize(16 * 1024 * 1024);
  server = builder.BuildAndStart();
  if (!server) return Internal("gRPC server failed to start");
  // Probes ask for the server as a whole ("", SERVING by default) or by service name; gRPC's
  // Shutdown() turns all of them NOT_SERVING.
  if (grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService()) {
    for (const char* name : {v1::Exec::service_full_name(), v1::Approvals::service_full_name(), v1::Policy::service_full_name(),
                             v1::Admin::service_full_name(), v1::Sandbox::service_full_name()}) {
      health->SetServingStatus(name, true);
    }
  }
  return Status::Ok();
}

void Daemon::Impl::start_acceptor(UniqueFd listener) {
  auto admit = [this](int fd, const posix::PeerCredentials& peer) {
#ifdef __linux__
    // A command inside a sandbox must never reach the daemon that sandboxed it.
    // Both at most once a second: a client that connects and exits at once (debug: nothing
    // is wrong) and a sandboxed command that keeps trying (warn) must not flood the log.
    static LogThrottle refused(spdlog::level::warn);
    static LogThrottle gone_early(spdlog::level::debug);
    std::string why;
    bool gone = false;
    if (!sandbox::linux_backend::socket_peer_in_same_namespaces(fd, &why, &gone)) {
      if (gone) gone_early.log("dropping connection from pid {} uid {}: the client exited first ({})", peer.pid, peer.uid, why);
      else refused.log("refusing connection from pid {} uid {}: {}", peer.pid, peer.uid, why);
      return false;
    }
#endif
    return true;
  };
  // gRPC gets the far end of a relay that watches the client's HTTP/2 frames (issue 19: an
  // endless header block); the peer is recorded under that end's fd, gRPC's "fd:N".
  auto hand_off = [this](int fd, const posix::PeerCredentials& peer) {
    static LogThrottle failed(spdlog::level::warn);
    const size_t uid_limit = is_admin(peer.uid) ? 0 : config.daemon.max_connections_per_uid;
    auto inner = relays->relay(UniqueFd(fd), peer.uid, peer.pid, uid_limit);
    if (!inner.ok()) {
      failed.log("closing connection from pid {} uid {}: {}", peer.pid, peer.uid, inner.status().message());
      return;
    }
    const int grpc_fd = inner->release();
    peers.add(grpc_fd, PeerInfo{peer.pid, peer.uid, peer.gid});
    grpc::AddInsecureChannelFromFd(server.get(), grpc_fd);
  };
  PrefaceGateLimits gate;
  gate.timeout = std::chrono::milliseconds(config.daemon.preface_timeout_ms);
  gate.max_waiting_per_uid = config.daemon.waiting_connections_per_uid;
  acceptor = std::make_unique<Acceptor>(std::move(listener), gate, admit, hand_off);
  acceptor->start();
}

void Daemon::Impl::announce() const {
  spdlog::info("codexd listening on {} ({} mode, pid {})", socket_path, is_system_mode(config) ? "system" : "user", ::getpid());
  notify_systemd("READY=1\nSTATUS=listening on " + socket_path);
}

void Daemon::Impl::stop_core_thread() {
  signals.cancel();
  core_work.reset();
  io.stop();
  if (core_thread.joinable()) core_thread.join();
}

void Daemon::Impl::reload_from_signal() {
  boost::asio::post(blocking, [this] {
    notify_systemd("RELOADING=1");
    // SIGHUP is also logrotate's postrotate: the audit file is reopened by its path.
    if (Status reopened = audit->reopen(); !reopened.ok()) spdlog::error("{}", reopened.message());
    auto result = policies->reload();
    orchestrator::log_reload(result, policies->state(), "SIGHUP");
    notify_systemd("READY=1");
  });
}

// SIGUSR2: a restart in place, as RestartDaemon does, when the files it will read are sound.
void Daemon::Impl::restart_from_signal() {
  const size_t live = core.engine->live_sessions();  // on the core thread (signal handlers run there)
  boost::asio::post(blocking, [this, live] {
    if (Status ready = check_restart_ready(live); !ready.ok()) {
      spdlog::error("SIGUSR2: {}", ready.message());
      return;
    }
    spdlog::info("received SIGUSR2, restarting in place and keeping the sessions");
    request_restart();
  });
}

void Daemon::Impl::watch_signals() {
  signals.async_wait([this](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    if (sig == SIGHUP) {
      reload_from_signal();
      watch_signals();
      return;
    }
    if (sig == SIGUSR2) {
      restart_from_signal();
      watch_signals();
      return;
    }
    if (sig == SIGUSR1) {
      spdlog::info("received SIGUSR1, shutting down and keeping the sessions for the next daemon");
      keep_sessions = true;
    } else {
      spdlog::info("received {}, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    }
    request_shutdown();
  });
}

Daemon::Daemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Daemon::~Daemon() = default;

void Daemon::request_shutdown() { impl_->request_shutdown(); }

Result<std::unique_ptr<Daemon>> Daemon::start(config::Config config, DaemonOptions options) {
  auto impl = std::make_unique<Impl>(std::move(config), std::move(options));
  Impl& d = *impl;
  ignore_sigpipe();
  d.sandbox = probe_sandbox(d.config);
  CODEXD_ASSIGN_OR_RETURN(d.policies, load_policy(d.config, d.options.default_rules));
  CODEXD_ASSIGN_OR_RETURN(d.audit, open_audit(d.config.audit));
  CODEXD_ASSIGN_OR_RETURN(Listener listener,
                          open_listener(d.config, d.options.inherited_listen_fd, d.options.inherited_socket_owned));
  d.socket_path = listener.socket_path;
  d.owns_socket_file = listener.owns_socket_file;
  CODEXD_ASSIGN_OR_RETURN(d.limits, open_limits(d.config.limits, d.socket_path, is_system_mode(d.config),
                                                  d.config.exec.durable_sessions));
  d.build_core();
  d.start_core_thread();
  d.build_services();
  if (Status started = d.start_metrics(); !started.ok()) {
    d.stop_core_thread();
    return started;
  }
  if (Status started = d.start_grpc(); !started.ok()) {
    d.metrics.reset();
    d.stop_core_thread();
    return started;
  }
  d.start_acceptor(std::move(listener.fd));
  d.announce();
  return std::unique_ptr<Daemon>(new Daemon(std::move(impl)));
}

int Daemon::wait() {
  Impl& d = *impl_;
  bool restarting = false;
  {
    std::unique_lock lock(d.mutex);
    d.cv.wait(lock, [&] { return d.shutdown_requested; });
    restarting = d.restart_requested;
  }
  // systemd keeps a service that reloads (the pid stays, the new image says READY=1), while
  // STOPPING=1 would have it wait for the exit.
  notify_systemd(restarting ? "RELOADING=1\nSTATUS=restarting in place, sessions kept" : "STOPPING=1");
  ShutdownWatch watch([&d] {
    return "live streams: " + std::to_string(d.streams.attach.load()) + " Attach, " +
           std::to_string(d.streams.approval_watch.load()) + " WatchApprovals, " +
           std::to_string(d.relays->live()) + " client connections";
  });
  watch.step("closing the listening socket");
  if (restarting) {
    d.handover = RestartHandover{d.acceptor->stop_keeping_listener(), d.owns_socket_file};
  } else {
    d.acceptor->stop();
  }
  d.metrics.reset();  // a scrape now would describe a daemon going away
  // Kill every session's process group and reap, and end pending approvals, on the core thread.
  std::promise<void> cleaned;
  watch.step("ending or keeping the sessions and approvals (core thread)");
  boost::asio::post(d.io, [&] {
    d.trimmer.stop();
    d.core.broker->shutdown();
    if (d.keep_sessions || d.options.keep_sessions || d.config.exec.keep_sessions_on_stop) {
      const size_t kept = d.core.engine->detach_all();
      spdlog::info("sessions: {} left running for the next daemon", kept);
      d.limits->shutdown_keeping_running();  // their groups stay, with their limits
    } else {
      if (size_t lingering = d.core.engine->kill_all(); lingering > 0) {
        spdlog::warn("sessions: {} session shim(s) had not ended {} ms after being told to; their commands may outlive the daemon",
                     lingering, exec::ExecEngine::kShimEndWait.count());
      }
      d.limits->shutdown();  // every cgroup of ours, also what a one-shot run still holds
    }
    cleaned.set_value();
  });
  cleaned.get_future().wait();
  watch.step("stopping the network proxy");
  d.network->stop();
  watch.step("gRPC server shutdown (in-flight calls finishing)");
  // In-flight calls get cancelled; their reactors finish on the still-running core thread.
  d.server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  d.server->Wait();
  watch.step("stopping the connection relays");
  d.relays->stop();
  watch.step("draining the core thread");  // gRPC closed its ends, so the relays have ended or end now
  // A reactor deletes itself on the core thread (its OnDone posts that): let what the last
  // calls posted run before the loop stops, or those reactors would never be freed.
  std::promise<void> drained;
  boost::asio::post(d.io, [&] { drained.set_value(); });
  drained.get_future().wait();
  watch.step("stopping the core thread and the blocking pool");
  d.stop_core_thread();
  d.blocking.join();
  if (d.owns_socket_file && !restarting) ::unlink(d.socket_path.c_str());
  d.audit->flush();
  spdlog::info(restarting ? "codexd stopped for a restart in place" : "codexd stopped");
  return 0;
}

std::optional<RestartHandover> Daemon::take_restart_handover() { return std::exchange(impl_->handover, std::nullopt); }

}  // namespace codexd::server
