#include "client/connection.h"

#include <cstdio>

#include "codexd/api_constants.h"

namespace codexd::client {

std::shared_ptr<grpc::Channel> connect(const ClientOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 * 1024 * 1024);
  return grpc::CreateCustomChannel("unix:" + options.socket, grpc::InsecureChannelCredentials(), args);
}

void prepare(grpc::ClientContext& context, const ClientOptions& options) {
  if (!options.agent_id.empty()) context.AddMetadata(api::kAgentIdMetadataKey, options.agent_id);
}

int report_rpc_error(const grpc::Status& status, const ClientOptions& options) {
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    std::fprintf(stderr, "codexctl: cannot reach codexd at %s: %s\n(is the daemon running? set --socket or CODEXD_SOCKET)\n",
                 options.socket.c_str(), status.error_message().c_str());
  } else {
    std::fprintf(stderr, "codexctl: %s\n", status.error_message().c_str());
  }
  return kExitRpcError;
}

}  // namespace codexd::client
