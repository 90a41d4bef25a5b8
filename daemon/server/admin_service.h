// codexd.v1.Admin: status and policy reload.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <functional>
#include <string>

#include "codexd/v1/admin.grpc.pb.h"
#include "daemon/config/config.h"
#include "daemon/exec/exec_engine.h"
#include "daemon/orchestrator/approval_broker.h"
#include "daemon/orchestrator/policy_store.h"
#include "daemon/orchestrator/private_tmp.h"
#include "daemon/server/network_plane.h"
#include "daemon/server/raw_unary.h"
#include "daemon/server/server_context.h"
#include "platform/limits/limits.h"
#include "platform/sandbox/sandbox.h"

namespace codexd::server {

// What GetStatus says about the daemon itself; fixed once it serves.
struct DaemonFacts {
  std::string mode_name;    // "user" | "system"
  std::string socket_path;  // the socket that really serves
  std::string config_path;  // "" on defaults
  std::chrono::steady_clock::time_point started_at;
  std::chrono::system_clock::time_point started_at_wall;
  size_t sessions_adopted = 0;             // taken over from the previous daemon at start
  std::vector<std::string> sessions_lost;  // found but not adopted, each with why
};

// A restart in place, as the composition root does it.
struct RestartHooks {
  std::string executable;                   // what the restart execs
  std::function<Status(size_t live_sessions)> check;  // reads files: on the blocking pool
  std::function<void()> begin;              // after the answer: stop, keep sessions, exec
};

struct AdminDeps {
  const config::Config* config = nullptr;                // approval policy, default sandbox mode
  const exec::ExecEngine* engine = nullptr;              // session counts (core thread)
  const orchestrator::ApprovalBroker* broker = nullptr;  // pending approvals (core thread)
  orchestrator::PolicyStore* policies = nullptr;         // state and reload
  const sandbox::SandboxManager* sandbox = nullptr;      // capabilities
  const limits::LimitsManager* limits = nullptr;         // mechanism (fixed after start)
  boost::asio::thread_pool* blocking = nullptr;          // reloads read files: off the core thread
  const NetworkPlane* network = nullptr;                 // proxy counters (thread-safe)
  const orchestrator::PrivateTmpStore* private_tmp = nullptr;  // the agents' /tmp (thread-safe); null: off
  DaemonFacts facts;
  RestartHooks restart;  // no `check`: this daemon cannot restart in place
};

class AdminService final : public v1::Admin::CallbackService {
 public:
  AdminService(const CoreContext& core, AdminDeps deps) : core_(core), deps_(std::move(deps)) {
    MarkMethodRawCallback(raw_method_index(v1::Admin::service_full_name(), "GetStatus"), raw_unary_handler(this, &AdminService::GetStatus));
    MarkMethodRawCallback(raw_method_index(v1::Admin::service_full_name(), "ReloadPolicy"), raw_unary_handler(this, &AdminService::ReloadPolicy));
    MarkMethodRawCallback(raw_method_index(v1::Admin::service_full_name(), "RestartDaemon"), raw_unary_handler(this, &AdminService::RestartDaemon));
  }
  grpc::ServerUnaryReactor* GetStatus(grpc::CallbackServerContext* ctx, const v1::GetStatusRequest* request,
                                      v1::GetStatusResponse* response) override;
  grpc::ServerUnaryReactor* ReloadPolicy(grpc::CallbackServerContext* ctx, const v1::ReloadPolicyRequest* request,
                                         v1::ReloadPolicyResponse* response) override;
  grpc::ServerUnaryReactor* RestartDaemon(grpc::CallbackServerContext* ctx, const v1::RestartDaemonRequest* request,
                                          v1::RestartDaemonResponse* response) override;

 private:
  std::string approval_policy_name(const std::string& agent_id) const;  // the caller's, as the API words it

  const CoreContext& core_;
  AdminDeps deps_;
};

void fill_policy_status(const orchestrator::PolicyState& state, const std::string& approval_policy, v1::PolicyStatus* out);

}  // namespace codexd::server
