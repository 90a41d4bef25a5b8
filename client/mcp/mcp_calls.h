// The codexd RPC of one `codexctl mcp` tools/call, and its answer as an MCP tool result.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>

#include "client/connection.h"
#include "client/mcp/mcp_tools.h"

namespace codexd::client::mcp {

// A started RPC for one tools/call. `done` is called once, on a gRPC thread, with the result
// to send; `cancel` asks gRPC to give up on the call (the command itself keeps running, as in
// Codex when a turn is interrupted). `waiting_for_approval_after_ms`: after this long, a wait
// is a reviewer's (the command's own wait is bounded by its yield time); 0: never.
class ToolCall {
 public:
  virtual ~ToolCall() = default;
  virtual void cancel() = 0;
  virtual uint32_t waiting_for_approval_after_ms() const = 0;
};

using ToolDone = std::function<void(json result)>;

// Starts tool `name` with `arguments` (checked by tool_request), or answers at once (unknown
// tool, bad arguments: `done` is called before this returns and the answer is nullptr).
// `workdir` is the turn's working directory: where relative `workdir` arguments resolve.
std::unique_ptr<ToolCall> start_tool_call(const std::shared_ptr<grpc::Channel>& channel, const ClientOptions& options,
                                          const std::string& workdir, const std::string& name, const json& arguments,
                                          ToolDone done);

}  // namespace codexd::client::mcp
