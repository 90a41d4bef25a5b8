// What every service and reactor shares: the core io thread and who is calling. Each service
// takes, besides this, only the parts it uses (its own *Deps struct, built in daemon.cc).
#pragma once

#include <grpcpp/server_context.h>
#include <sys/types.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <optional>

#include "daemon/orchestrator/exec_request.h"
#include "daemon/server/peer_registry.h"

namespace codexd::server {

// Streaming calls whose reactor has not yet been told it is done (OnDone): metrics, and the
// shutdown watch's answer to "which call does gRPC still wait for".
struct LiveStreams {
  std::atomic<int64_t> attach{0};
  std::atomic<int64_t> approval_watch{0};
};

// One per daemon, outliving every service and reactor.
struct CoreContext {
  boost::asio::io_context* io = nullptr;  // the single thread that owns sessions and approvals
  const PeerRegistry* peers = nullptr;    // credentials of every live connection
  std::function<bool(uid_t)> is_admin;    // root, the daemon's uid, daemon.admin_uids
  LiveStreams* streams = nullptr;         // null in tests that build services alone
};

// The caller of an RPC, from the connection's SO_PEERCRED. nullopt: unknown connection.
std::optional<orchestrator::Caller> caller_of(const CoreContext& core, const grpc::CallbackServerContext* ctx);

// Runs `fn` on the core thread.
void on_core(const CoreContext& core, std::function<void()> fn);

}  // namespace codexd::server
