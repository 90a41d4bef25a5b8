// What every service needs: the core io thread, the daemon's parts, and who is calling.
#pragma once

#include <grpcpp/server_context.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "daemon/config/config.h"
#include "daemon/exec/exec_engine.h"
#include "daemon/orchestrator/approval_broker.h"
#include "daemon/orchestrator/command_runner.h"
#include "daemon/orchestrator/orchestrator.h"
#include "daemon/orchestrator/policy_store.h"
#include "daemon/server/peer_registry.h"
#include "platform/sandbox/sandbox.h"

namespace codexd::server {

struct DaemonParts {
  boost::asio::io_context* core = nullptr;  // the single thread that owns sessions and approvals
  boost::asio::thread_pool* blocking = nullptr;  // file I/O that must not stall the core (policy reload)
  const config::Config* config = nullptr;
  exec::ExecEngine* engine = nullptr;
  orchestrator::Orchestrator* orchestrator = nullptr;
  orchestrator::CommandRunner* runner = nullptr;
  orchestrator::ApprovalBroker* broker = nullptr;
  orchestrator::PolicyStore* policies = nullptr;
  const sandbox::SandboxManager* sandbox = nullptr;
  const orchestrator::LaunchBuilder* launches = nullptr;  // every entry point builds its launch here
  const PeerRegistry* peers = nullptr;
  std::function<bool(uid_t)> is_admin;
  std::function<bool(uid_t)> may_run_commands;  // user mode: only the daemon's own uid (and root)
  std::string socket_path;
  std::string config_path;
  std::chrono::steady_clock::time_point started_at;
  std::function<orchestrator::ReloadResult()> reload_policy;
  std::string mode_name;  // "user" | "system"
};

// The caller of an RPC, from the connection's SO_PEERCRED. nullopt: unknown connection.
std::optional<orchestrator::Caller> caller_of(const DaemonParts& parts, const grpc::CallbackServerContext* ctx);

// Runs `fn` on the core thread.
void on_core(const DaemonParts& parts, std::function<void()> fn);

}  // namespace codexd::server
