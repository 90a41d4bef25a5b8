#include "daemon/server/admin_service.h"

#include <unistd.h>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "daemon/server/core_reactors.h"
#include "daemon/server/proto_convert.h"

#ifdef __linux__
#include "platform/linux/linux_capabilities.h"
#endif

#ifndef CODEXD_VERSION
#define CODEXD_VERSION "0.0.0"
#endif

namespace codexd::server {
namespace {

int64_t unix_ms(std::chrono::system_clock::time_point t) {
  if (t.time_since_epoch().count() == 0) return 0;
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

void fill_sandbox_status(const sandbox::SandboxManager& manager, const config::Config& config, v1::SandboxCapabilities* sb) {
  const sandbox::SandboxMode default_mode = config.sandbox.policy.mode;
  const auto& caps = manager.capabilities();
  sb->set_chosen_backend(std::string(sandbox::to_string(caps.chosen)));
#ifdef __linux__
  if (const auto* linux_caps = sandbox::linux_backend::linux_capabilities(manager)) {
    sb->set_bwrap_path(linux_caps->bwrap_path);
    sb->set_bwrap_version(linux_caps->bwrap_version);
    for (const auto& f : linux_caps->bwrap_flags) sb->add_bwrap_flags(f);
    sb->set_user_namespaces_usable(linux_caps->user_namespaces_usable);
    sb->set_landlock_abi(linux_caps->landlock_abi);
    sb->set_seccomp_available(linux_caps->seccomp_available);
  }
#endif
  for (const auto& w : caps.warnings) sb->add_warnings(w);
  sb->set_helper_path(caps.helper_path);
  sb->set_default_mode(std::string(sandbox::to_string(default_mode)));
  sb->set_exec_supervision_available(caps.exec_supervision);
  sb->set_exec_supervision(config::exec_supervision_name(config.exec.exec_supervision));
  if (config.exec.exec_supervision != config::ExecSupervision::kOff && !caps.exec_supervision) {
    sb->add_warnings("exec_supervision is " + std::string(config::exec_supervision_name(config.exec.exec_supervision)) +
                     " but this system cannot supervise execs: every sandboxed command is refused");
  }
}

std::string proxy_enforcement(sandbox::Backend backend) {
  switch (backend) {
    case sandbox::Backend::kLinuxBwrap:
      return "bwrap: own network namespace with only lo; proxy ports 3128 (HTTP) and 1080 (SOCKS5) inside it; "
             "seccomp allows only AF_INET/AF_INET6 sockets";
    case sandbox::Backend::kLinuxLandlock:
      return "landlock: no network namespace; TCP connect only to two ephemeral proxy ports on the host's loopback "
             "(Landlock ABI 4), no UDP, Unix or netlink sockets (seccomp); another host process could also connect "
             "to those ports";
    default: return "proxy mode is not available with this backend";
  }
}

void fill_network_status(const config::Config& config, sandbox::Backend backend, const NetworkPlane* plane,
                         v1::NetworkStatus* out) {
  out->set_default_mode(std::string(sandbox::to_string(config.sandbox.policy.network)));
  if (config.sandbox.policy.network == sandbox::NetworkMode::kHost) {
    out->add_warnings("network mode host is DANGEROUS: sandboxed commands share the host's network namespace "
                      "(every loopback service, abstract Unix socket and reachable address)");
  }
  for (const auto& [agent, o] : config.agents) {
    if (o.network == sandbox::NetworkMode::kHost) out->add_warnings("agent " + agent + " runs with network mode host (DANGEROUS)");
  }
  out->set_enforcement(proxy_enforcement(backend));
  for (const auto& p : config.network.allow) out->add_allow(p.to_string());
  for (const auto& p : config.network.deny) out->add_deny(p.to_string());
  out->set_limited(config.network.limited);
  if (!plane) return;
  network::ProxyCounters c = plane->counters();
  out->set_active_connections(c.active_connections);
  out->set_allowed_total(c.total_allowed);
  out->set_denied_total(c.total_denied);
  out->set_bytes_up(c.bytes_up);
  out->set_bytes_down(c.bytes_down);
}

}  // namespace

void fill_policy_status(const orchestrator::PolicyState& state, const std::string& approval_policy, v1::PolicyStatus* out) {
  for (const auto& f : state.files) {
    auto* file = out->add_files();
    file->set_path(f.path);
    file->set_loaded(f.loaded);
    file->set_error(f.error);
    file->set_rule_count(static_cast<uint32_t>(f.rule_count));
  }
  out->set_rule_count(static_cast<uint32_t>(state.rule_count));
  out->set_loaded_at_unix_ms(unix_ms(state.loaded_at));
  out->set_last_error(state.last_error);
  out->set_last_attempt_unix_ms(unix_ms(state.last_attempt));
  out->set_approval_policy(approval_policy);
  for (const auto& warning : state.warnings) out->add_warnings(warning);
}

namespace {

// The caller's private /tmp directories (every uid's for an admin).
void fill_private_tmp_status(const orchestrator::PrivateTmpStore* store, const orchestrator::Caller& caller,
                             v1::PrivateTmpStatus* out) {
  out->set_enabled(store != nullptr);
  if (!store) return;
  out->set_base(store->options().base);
  out->set_grace_ms(store->options().grace_ms);
  for (const orchestrator::PrivateTmpEntry& e : store->list(caller.uid, caller.is_admin)) {
    v1::PrivateTmpDir* dir = out->add_dirs();
    dir->set_uid(e.uid);
    dir->set_agent_id(e.agent_id);
    dir->set_path(e.path);
    dir->set_commands(static_cast<uint32_t>(e.commands));
    dir->set_removal_in_ms(e.removal_in_ms.value_or(-1));
  }
}

}  // namespace

grpc::ServerUnaryReactor* AdminService::GetStatus(grpc::CallbackServerContext* ctx, const v1::GetStatusRequest*,
                                                  v1::GetStatusResponse* response) {
  auto [reactor, caller] = begin_unary(core_, ctx);
  if (!caller) return reactor;
  const DaemonFacts& facts = deps_.facts;
  response->set_version(CODEXD_VERSION);
  response->set_mode(facts.mode_name);
  response->set_uptime_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - facts.started_at).count());
  response->set_pid(::getpid());
  response->set_started_at_unix_ms(unix_ms(facts.started_at_wall));
  response->set_socket_path(facts.socket_path);
  response->set_config_path(facts.config_path);
  response->set_caller_uid(caller->uid);
  response->set_caller_is_admin(caller->is_admin);
  response->mutable_adoption()->set_adopted(static_cast<uint32_t>(facts.sessions_adopted));
  if (caller->is_admin) {
    for (const auto& lost : facts.sessions_lost) response->mutable_adoption()->add_lost(lost);
  }
  fill_policy_status(deps_.policies->state(), approval_policy_name(caller->agent_id), response->mutable_policy());
  fill_sandbox_status(*deps_.sandbox, *deps_.config, response->mutable_sandbox());
  fill_network_status(*deps_.config, deps_.sandbox->capabilities().chosen, deps_.network, response->mutable_network());
  if (deps_.limits) fill_limits_status(deps_.limits->status(), response->mutable_limits());
  fill_private_tmp_status(deps_.private_tmp, *caller, response->mutable_private_tmp());
  // An admin sees the daemon's counts; anyone else their own (other users' activity is theirs).
  on_core(core_, [this, reactor, response, uid = caller->uid, admin = caller->is_admin] {
    const auto& engine = *deps_.engine;
    response->set_sessions_live(static_cast<uint32_t>(admin ? engine.live_sessions() : engine.live_sessions_of(uid)));
    response->set_sessions_total(static_cast<uint32_t>(admin ? engine.total_sessions() : engine.total_sessions_of(uid)));
    response->set_approvals_pending(
        static_cast<uint32_t>(admin ? deps_.broker->pending_count() : deps_.broker->pending_refs_for(uid).size()));
    if (admin) response->set_approvals_state_error(deps_.broker->state_error());
    reactor->finish(grpc::Status::OK);
  });
  return reactor;
}

grpc::ServerUnaryReactor* AdminService::ReloadPolicy(grpc::CallbackServerContext* ctx, const v1::ReloadPolicyRequest*,
                                                     v1::ReloadPolicyResponse* response) {
  auto [reactor, caller] = begin_unary(core_, ctx);
  if (!caller) return reactor;
  if (!caller->is_admin) {
    reactor->finish(PermissionDenied("reloading the policy needs an admin uid (root, the daemon's uid, or daemon.admin_uids)"));
    return reactor;
  }
  // Reading and evaluating rules files is file I/O: keep it off the core thread.
  boost::asio::post(*deps_.blocking, [this, reactor, response, agent = caller->agent_id, uid = caller->uid] {
    auto result = deps_.policies->reload();
    orchestrator::log_reload(result, deps_.policies->state(), "Admin.ReloadPolicy by uid " + std::to_string(uid));
    response->set_ok(result.ok);
    for (const auto& e : result.errors) response->add_errors(e);
    fill_policy_status(deps_.policies->state(), approval_policy_name(agent), response->mutable_policy());
    on_core(core_, [reactor] { reactor->finish(grpc::Status::OK); });
  });
  return reactor;
}

grpc::ServerUnaryReactor* AdminService::RestartDaemon(grpc::CallbackServerContext* ctx, const v1::RestartDaemonRequest*,
                                                      v1::RestartDaemonResponse* response) {
  auto [reactor, caller] = begin_unary(core_, ctx);
  if (!caller) return reactor;
  if (!caller->is_admin) {
    reactor->finish(PermissionDenied("restarting the daemon needs an admin uid (root, the daemon's uid, or daemon.admin_uids)"));
    return reactor;
  }
  if (!deps_.restart.check || !deps_.restart.begin) {
    reactor->finish(FailedPrecondition("this daemon cannot restart in place; stop and start it"));
    return reactor;
  }
  const uid_t uid = caller->uid;
  on_core(core_, [this, slot = reactor->slot(), response, uid] {
    if (!slot->reactor) return;
    const size_t live = deps_.engine->live_sessions();
    boost::asio::post(*deps_.blocking, [this, slot, response, uid, live] {
      Status ready = deps_.restart.check(live);
      on_core(core_, [this, slot, response, uid, live, ready = std::move(ready)] {
        if (!slot->reactor) return;  // the caller is gone: nobody asked for it any more
        if (!ready.ok()) {
          spdlog::warn("restart in place asked by uid {}: {}", uid, ready.message());
          slot->reactor->finish(ready);
          return;
        }
        response->set_pid(::getpid());
        response->set_started_at_unix_ms(unix_ms(deps_.facts.started_at_wall));
        response->set_executable(deps_.restart.executable);
        response->set_sessions_kept(static_cast<uint32_t>(live));
        spdlog::info("restart in place asked by uid {}: keeping {} session(s), then exec {}", uid, live,
                     deps_.restart.executable);
        slot->reactor->finish(grpc::Status::OK);
        deps_.restart.begin();  // the stop lets this answer go out before gRPC shuts down
      });
    });
  });
  return reactor;
}

std::string AdminService::approval_policy_name(const std::string& agent_id) const {
  return policy::approval_policy_name(deps_.config->approval_policy_for(agent_id));
}

}  // namespace codexd::server
