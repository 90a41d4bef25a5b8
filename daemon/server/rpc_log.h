// The debug log of every RPC: one line when the call ends, with its method, its caller (uid,
// pid, agent label), the session or approval it names, its status and how long it took. The
// request itself is never logged (command text stays out of the log; ids only). Installed
// only when the daemon logs at debug or finer, so a daemon at info pays nothing per call.
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <memory>

#include "daemon/server/peer_registry.h"

namespace codexd::server {

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> make_rpc_log_interceptor_factory(
    const PeerRegistry* peers);

}  // namespace codexd::server
