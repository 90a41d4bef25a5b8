// How codexctl reaches the daemon: the socket path, the agent label, RPC error reporting.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

namespace codexd::client {

// Exit codes of codexctl (besides a command's own exit code).
inline constexpr int kExitRpcError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitRejected = 125;  // nothing ran: policy, reviewer, or no sandbox

struct ClientOptions {
  std::string socket;    // --socket, else $CODEXD_SOCKET, else the user-mode default
  bool json = false;     // --json
  std::string agent_id;  // --agent-id, else $CODEXD_AGENT_ID, else "codexctl"
};

// The socket's path from --socket / $CODEXD_SOCKET: PATH, unix:PATH or unix://PATH.
std::string socket_path(const std::string& socket);
// A channel to the daemon; `args` adds to codexctl's own (e.g. a view's reconnect backoff).
std::shared_ptr<grpc::Channel> connect(const ClientOptions& options, grpc::ChannelArguments args = {});
// Labels the call with the agent id.
void prepare(grpc::ClientContext& context, const ClientOptions& options);

// One unary call of `Service` on `channel` (by default a new connection), labelled with the
// agent id, e.g. call_unary<v1::Admin>(options, &v1::Admin::Stub::GetStatus, request, &response).
template <typename Service, typename Request, typename Response>
grpc::Status call_unary(const ClientOptions& options, const std::shared_ptr<grpc::Channel>& channel,
                        grpc::Status (Service::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                        const Request& request, Response* response) {
  auto stub = Service::NewStub(channel);
  grpc::ClientContext context;
  prepare(context, options);
  return ((*stub).*method)(&context, request, response);
}
template <typename Service, typename Request, typename Response>
grpc::Status call_unary(const ClientOptions& options,
                        grpc::Status (Service::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                        const Request& request, Response* response) {
  return call_unary<Service>(options, connect(options), method, request, response);
}
// Prints "codexctl: <message>" (with a hint when the daemon is unreachable); returns kExitRpcError.
int report_rpc_error(const grpc::Status& status, const ClientOptions& options);

// Ends codexctl with `code` once stdout and stderr are flushed and the terminal restored,
// without gRPC's teardown (connection.cc says why). Every exit of codexctl goes through here.
[[noreturn]] void exit_process(int code);

}  // namespace codexd::client
