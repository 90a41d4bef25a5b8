// The tools `codexctl mcp` offers, with Codex's unified-exec names, parameter schemas and
// result text (exec_command, write_stdin), plus list_sessions and kill_session. Each tool turns
// its JSON arguments into one codexd RPC and the answer into an MCP tool result. Argument
// errors are values (ToolError), reported to the model as an error result, never thrown.
#pragma once

#include <grpcpp/grpcpp.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "client/connection.h"

namespace codexd::client::mcp {

using nlohmann::json;

// The `tools` array of a tools/list answer.
json tool_definitions();

// An MCP CallToolResult: {content: [{type: text, text}], isError, structuredContent?}.
json text_result(const std::string& text, bool is_error, std::optional<json> structured = std::nullopt);

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

// Starts tool `name` with `arguments`, or answers at once (unknown tool, bad arguments:
// `done` is called before this returns and the answer is nullptr). `workdir` is the turn's
// working directory: where relative `workdir` arguments resolve.
std::unique_ptr<ToolCall> start_tool_call(const std::shared_ptr<grpc::Channel>& channel, const ClientOptions& options,
                                          const std::string& workdir, const std::string& name, const json& arguments,
                                          ToolDone done);

}  // namespace codexd::client::mcp
