#include "daemon/server/server_context.h"

#include <boost/asio/post.hpp>

#include "codexd/api_constants.h"

namespace codexd::server {

std::optional<orchestrator::Caller> caller_of(const CoreContext& core, const grpc::CallbackServerContext* ctx) {
  auto peer = core.peers->find(ctx->peer());
  if (!peer) return std::nullopt;
  orchestrator::Caller caller;
  caller.uid = peer->uid;
  caller.gid = peer->gid;
  caller.pid = peer->pid;
  caller.is_admin = core.is_admin(peer->uid);
  // The agent label is the caller's own claim: display and audit only, never an authority.
  auto it = ctx->client_metadata().find(api::kAgentIdMetadataKey);
  if (it != ctx->client_metadata().end()) {
    std::string label(it->second.data(), std::min<size_t>(it->second.size(), 128));
    for (char& c : label) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    caller.agent_id = std::move(label);
  }
  return caller;
}

void on_core(const CoreContext& core, std::function<void()> fn) { boost::asio::post(*core.io, std::move(fn)); }

}  // namespace codexd::server
