#include "daemon/server/daemon.h"

#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

#include <algorithm>
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
#include "daemon/orchestrator/audit_log.h"
#include "daemon/orchestrator/command_runner.h"
#include "daemon/orchestrator/identity.h"
#include "daemon/orchestrator/orchestrator.h"
#include "daemon/orchestrator/policy_store.h"
#include "daemon/server/admin_service.h"
#include "daemon/server/approvals_service.h"
#include "daemon/server/exec_service.h"
#include "daemon/server/peer_registry.h"
#include "daemon/server/policy_service.h"
#include "daemon/server/sandbox_service.h"
#include "daemon/server/unix_listener.h"
#include "policies/amend.h"
#include "platform/backends/manager_factory.h"
#include "platform/sandbox/format.h"

#ifdef __linux__
#include "platform/linux/peer_namespaces.h"
#endif
#ifdef CODEXD_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace codexd::server {
namespace {

void notify_systemd([[maybe_unused]] const std::string& state) {
#ifdef CODEXD_HAVE_SYSTEMD
  sd_notify(0, state.c_str());
#endif
}

// Requesters review their own commands; configured uids, a reviewer group and admins review all.
class ConfiguredReviewers : public orchestrator::ReviewerPolicy {
 public:
  ConfiguredReviewers(std::vector<uid_t> uids, std::optional<gid_t> group, std::function<bool(uid_t)> is_admin)
      : uids_(std::move(uids)), group_(group), is_admin_(std::move(is_admin)) {}
  bool may_review(uid_t reviewer, const orchestrator::ApprovalTicket& ticket) const override {
    if (reviewer == ticket.requester_uid || is_admin_(reviewer)) return true;
    if (std::find(uids_.begin(), uids_.end(), reviewer) != uids_.end()) return true;
    return group_ && orchestrator::uid_in_group(reviewer, *group_);
  }

 private:
  std::vector<uid_t> uids_;
  std::optional<gid_t> group_;
  std::function<bool(uid_t)> is_admin_;
};

}  // namespace

struct Daemon::Impl {
  config::Config config;
  DaemonOptions options;
  std::string socket_path;
  bool owns_socket_file = true;
  std::chrono::steady_clock::time_point started_at = std::chrono::steady_clock::now();

  boost::asio::io_context core;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> core_work;
  std::thread core_thread;
  boost::asio::thread_pool blocking{1};
  boost::asio::signal_set signals{core};

  std::unique_ptr<sandbox::SandboxManager> sandbox;
  std::unique_ptr<orchestrator::PolicyStore> policies;
  std::unique_ptr<orchestrator::AuditLog> audit;
  std::unique_ptr<exec::ExecEngine> engine;
  std::unique_ptr<orchestrator::ApprovalBroker> broker;
  std::unique_ptr<orchestrator::ApprovalCache> cache;
  std::unique_ptr<orchestrator::LaunchBuilder> launches;
  std::unique_ptr<orchestrator::Orchestrator> orchestrator;
  std::unique_ptr<orchestrator::CommandRunner> runner;

  PeerRegistry peers;
  DaemonParts parts;
  std::unique_ptr<ExecService> exec_service;
  std::unique_ptr<ApprovalsService> approvals_service;
  std::unique_ptr<PolicyService> policy_service;
  std::unique_ptr<AdminService> admin_service;
  std::unique_ptr<SandboxService> sandbox_service;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<Acceptor> acceptor;

  std::mutex mutex;
  std::condition_variable cv;
  bool shutdown_requested = false;

  bool is_admin(uid_t uid) const {
    if (uid == 0 || uid == ::geteuid()) return true;
    return std::find(config.daemon.admin_uids.begin(), config.daemon.admin_uids.end(), uid) != config.daemon.admin_uids.end();
  }

  void request_shutdown() {
    std::lock_guard lock(mutex);
    shutdown_requested = true;
    cv.notify_all();
  }

  void reload_from_signal() {
    boost::asio::post(blocking, [this] {
      notify_systemd("RELOADING=1");
      auto result = policies->reload();
      if (result.ok) {
        spdlog::info("policy reloaded (SIGHUP): {} rules", policies->state().rule_count);
      } else {
        for (const auto& e : result.errors) spdlog::error("policy reload failed, keeping the previous policy: {}", e);
      }
      notify_systemd("READY=1");
    });
  }

  void watch_signals() {
    signals.async_wait([this](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      if (sig == SIGHUP) {
        reload_from_signal();
        watch_signals();
        return;
      }
      spdlog::info("received {}, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
      request_shutdown();
    });
  }
};

Daemon::Daemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Daemon::~Daemon() = default;

void Daemon::request_shutdown() { impl_->request_shutdown(); }

Result<std::unique_ptr<Daemon>> Daemon::start(config::Config config, DaemonOptions options) {
  auto impl = std::make_unique<Impl>();
  Impl& d = *impl;
  d.config = std::move(config);
  d.options = std::move(options);
  d.socket_path = config::socket_path(d.config);
  const bool system_mode = d.config.daemon.mode == config::DaemonMode::kSystem;

  // A client that goes away mid-write must not kill the daemon.
  ::signal(SIGPIPE, SIG_IGN);

  // Sandbox: probe once, report what works.
  sandbox::SandboxManagerOptions sandbox_options;
  sandbox_options.preference = d.config.sandbox.backend;
  sandbox_options.helper_path = d.config.sandbox.helper_path;
  d.sandbox = sandbox::create_sandbox_manager(sandbox_options);
  for (const auto& line : d.sandbox->capabilities().warnings) spdlog::warn("sandbox: {}", line);
  spdlog::info("sandbox: {}", sandbox::format_capability_report(d.sandbox->capabilities()));

  // Policy: all files or nothing. System mode fails closed: without the administrator's rules
  // (forbidden ones included) it does not serve. User mode starts with an empty policy and
  // reports the errors (GetStatus, logs) until the files are fixed and reloaded.
  d.policies = std::make_unique<orchestrator::PolicyStore>(d.options.default_rules, d.config.policy.rules_dirs, system_mode);
  auto loaded = d.policies->reload();
  if (loaded.ok) {
    spdlog::info("policy: {} rules from {} files", d.policies->state().rule_count, d.policies->state().files.size());
  } else {
    std::string all;
    for (const auto& e : loaded.errors) {
      spdlog::error("policy not loaded: {}", e);
      all += "\n  " + e;
    }
    if (system_mode) return FailedPrecondition("the rules do not load (system mode does not start without them):" + all);
  }

  auto audit = orchestrator::AuditLog::open(d.config.audit.log_file, d.config.audit.journald);
  if (!audit.ok()) return audit.status();
  d.audit = std::move(audit).value();

  // The socket, before any thread starts serving.
  UniqueFd listener;
  if (d.options.inherited_listen_fd >= 0) {
    listener.reset(d.options.inherited_listen_fd);
    d.owns_socket_file = false;
    spdlog::info("using the listening socket passed by systemd (fd {})", d.options.inherited_listen_fd);
    // The socket that really serves is the one to report and to hide from commands.
    sockaddr_un bound{};
    socklen_t length = sizeof bound;
    const socklen_t path_offset = offsetof(sockaddr_un, sun_path);
    if (::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&bound), &length) == 0 && bound.sun_family == AF_UNIX &&
        length > path_offset && bound.sun_path[0] == '/') {
      std::string passed(bound.sun_path, ::strnlen(bound.sun_path, length - path_offset));
      if (passed != d.socket_path) {
        spdlog::warn("systemd passed {} but daemon.listen names {}: serving and masking {}", passed, d.socket_path, passed);
        d.socket_path = passed;
      }
    }
  } else {
    SocketOptions socket_options;
    socket_options.path = d.socket_path;
    socket_options.socket_mode = d.config.daemon.socket_mode ? d.config.daemon.socket_mode : (system_mode ? 0660 : 0600);
    socket_options.dir_mode = d.config.daemon.socket_dir_mode ? d.config.daemon.socket_dir_mode : (system_mode ? 0750 : 0700);
    if (system_mode) {
      socket_options.group = orchestrator::group_id(d.config.daemon.socket_group);
      if (!socket_options.group) {
        spdlog::warn("group {} does not exist: only root can connect to {}", d.config.daemon.socket_group, d.socket_path);
      }
    }
    auto opened = open_listening_socket(socket_options);
    if (!opened.ok()) return opened.status();
    listener = std::move(opened).value();
  }
  std::string socket_dir = d.socket_path.substr(0, d.socket_path.rfind('/'));

  // Core: sessions, approvals, orchestration, all on one io thread.
  exec::StoreLimits store_limits;
  store_limits.max_sessions = d.config.exec.max_sessions;
  store_limits.max_sessions_per_agent = d.config.exec.max_sessions_per_agent;
  store_limits.max_sessions_total = d.config.exec.max_sessions_total;
  exec::EngineOptions engine_options;
  engine_options.max_poll_ms = d.config.exec.background_terminal_max_timeout_ms;
  engine_options.session_limits.poll_buffer_bytes = d.config.exec.session_output_bytes;
  engine_options.session_limits.attach_window_bytes = d.config.exec.attach_window_bytes;
  d.engine = std::make_unique<exec::ExecEngine>(d.core, store_limits, engine_options);

  Impl* self = &d;
  auto is_admin = [self](uid_t uid) { return self->is_admin(uid); };
  std::optional<gid_t> reviewer_group;
  if (!d.config.approvals.reviewer_group.empty()) {
    reviewer_group = orchestrator::group_id(d.config.approvals.reviewer_group);
    if (!reviewer_group) spdlog::warn("approvals.reviewer_group {} does not exist", d.config.approvals.reviewer_group);
  }
  orchestrator::BrokerOptions broker_options;
  broker_options.timeout = std::chrono::milliseconds(d.config.approvals.timeout_ms);
  broker_options.reject_without_reviewer = d.config.approvals.reject_without_reviewer;
  d.broker = std::make_unique<orchestrator::ApprovalBroker>(
      d.core, broker_options,
      std::make_shared<ConfiguredReviewers>(d.config.approvals.reviewer_uids, reviewer_group, is_admin));
  d.cache = std::make_unique<orchestrator::ApprovalCache>(d.config.approvals.session_cache_entries);

  orchestrator::LaunchBuilderDeps launch_deps;
  launch_deps.config = &d.config;
  launch_deps.sandbox = d.sandbox.get();
  launch_deps.base_env = exec::current_process_environment();
  launch_deps.socket_dir = socket_dir;
  d.launches = std::make_unique<orchestrator::LaunchBuilder>(std::move(launch_deps));

  orchestrator::OrchestratorDeps deps;
  deps.config = &d.config;
  deps.policies = d.policies.get();
  deps.launches = d.launches.get();
  deps.broker = d.broker.get();
  deps.cache = d.cache.get();
  if (!d.config.policy.amend_file.empty()) {
    deps.amend_policy = [self](std::vector<std::string> prefix, std::function<void()> then) {
      boost::asio::post(self->blocking, [self, prefix = std::move(prefix), then = std::move(then)]() mutable {
        Status appended = policy::append_allow_prefix_rule(self->config.policy.amend_file, prefix);
        if (!appended.ok()) {
          spdlog::warn("could not remember the approved prefix: {}", appended.message());
        } else if (auto reloaded = self->policies->reload(); !reloaded.ok) {
          for (const auto& e : reloaded.errors) spdlog::error("policy reload after an amendment failed: {}", e);
        }
        boost::asio::post(self->core, std::move(then));
      });
    };
  }
  d.orchestrator = std::make_unique<orchestrator::Orchestrator>(std::move(deps));
  d.runner = std::make_unique<orchestrator::CommandRunner>(d.core, *d.orchestrator, *d.engine, *d.audit);

  d.parts.core = &d.core;
  d.parts.blocking = &d.blocking;
  d.parts.config = &d.config;
  d.parts.engine = d.engine.get();
  d.parts.orchestrator = d.orchestrator.get();
  d.parts.runner = d.runner.get();
  d.parts.broker = d.broker.get();
  d.parts.policies = d.policies.get();
  d.parts.sandbox = d.sandbox.get();
  d.parts.launches = d.launches.get();
  d.parts.peers = &d.peers;
  d.parts.is_admin = is_admin;
  d.parts.may_run_commands = [system_mode](uid_t uid) { return system_mode || uid == ::geteuid() || uid == 0; };
  d.parts.socket_path = d.socket_path;
  d.parts.config_path = d.options.config_path;
  d.parts.started_at = d.started_at;
  d.parts.reload_policy = [self] { return self->policies->reload(); };
  d.parts.mode_name = system_mode ? "system" : "user";

  d.core_work.emplace(d.core.get_executor());
  d.signals.add(SIGTERM);
  d.signals.add(SIGINT);
  d.signals.add(SIGHUP);
  d.watch_signals();
  d.core_thread = std::thread([self] {
    // Exceptions never cross the thread: log, and keep serving.
    for (;;) {
      try {
        self->core.run();
        return;
      } catch (const std::exception& e) {
        spdlog::critical("core thread: unexpected exception: {}", e.what());
      }
    }
  });

  // gRPC: no listening port of its own; connections arrive from our acceptor.
  d.exec_service = std::make_unique<ExecService>(d.parts);
  d.approvals_service = std::make_unique<ApprovalsService>(d.parts);
  d.policy_service = std::make_unique<PolicyService>(d.parts);
  d.admin_service = std::make_unique<AdminService>(d.parts);
  d.sandbox_service = std::make_unique<SandboxService>(d.parts);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.RegisterService(d.exec_service.get());
  builder.RegisterService(d.approvals_service.get());
  builder.RegisterService(d.policy_service.get());
  builder.RegisterService(d.admin_service.get());
  builder.RegisterService(d.sandbox_service.get());
  builder.SetMaxReceiveMessageSize(8 * 1024 * 1024);
  builder.SetMaxSendMessageSize(16 * 1024 * 1024);
  d.server = builder.BuildAndStart();
  if (!d.server) return Internal("gRPC server failed to start");

  d.acceptor = std::make_unique<Acceptor>(
      std::move(listener),
      [self](int fd, const posix::PeerCredentials& peer) {
#ifdef __linux__
        // A command inside a sandbox must never reach the daemon that sandboxed it.
        std::string why;
        if (!sandbox::linux_backend::socket_peer_in_same_namespaces(fd, &why)) {
          spdlog::warn("refusing connection from pid {} uid {}: {}", peer.pid, peer.uid, why);
          return false;
        }
#endif
        self->peers.add(fd, PeerInfo{peer.pid, peer.uid, peer.gid});
        return true;
      },
      [self](int fd) { grpc::AddInsecureChannelFromFd(self->server.get(), fd); });
  d.acceptor->start();

  spdlog::info("codexd listening on {} ({} mode, pid {})", d.socket_path, system_mode ? "system" : "user", ::getpid());
  notify_systemd("READY=1\nSTATUS=listening on " + d.socket_path);
  return std::unique_ptr<Daemon>(new Daemon(std::move(impl)));
}

int Daemon::wait() {
  Impl& d = *impl_;
  {
    std::unique_lock lock(d.mutex);
    d.cv.wait(lock, [&] { return d.shutdown_requested; });
  }
  notify_systemd("STOPPING=1");
  d.acceptor->stop();
  // Kill every session's process group and reap, and end pending approvals, on the core thread.
  std::promise<void> cleaned;
  boost::asio::post(d.core, [&] {
    d.broker->shutdown();
    d.engine->kill_all();
    cleaned.set_value();
  });
  cleaned.get_future().wait();
  // In-flight calls get cancelled; their reactors finish on the still-running core thread.
  d.server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  d.server->Wait();
  d.signals.cancel();
  d.core_work.reset();
  d.core.stop();
  if (d.core_thread.joinable()) d.core_thread.join();
  d.blocking.join();
  if (d.owns_socket_file) ::unlink(d.socket_path.c_str());
  d.audit->flush();
  spdlog::info("codexd stopped");
  return 0;
}

}  // namespace codexd::server
