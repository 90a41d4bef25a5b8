// The JSON-RPC 2.0 side of `codexctl mcp` (one message per line, the MCP stdio transport),
// without stdin, stdout or a daemon: a line is parsed and checked here and answered when it
// can be at once (initialize, ping, tools/list, every malformed message); what needs the
// server (a tool call to start, a call to cancel) is handed to its McpPeer.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace codexd::client::mcp {

using nlohmann::json;

// JSON-RPC 2.0 error codes.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;

class McpPeer {
 public:
  virtual ~McpPeer() = default;
  // One message to write to the client.
  virtual void send(const json& message) = 0;
  // tools/call of a tool that exists (`arguments` as given, unchecked); `id` is a string or
  // an integer; `progress_token` is params._meta.progressToken.
  virtual void call_tool(const json& id, const std::string& name, const json& arguments,
                         std::optional<json> progress_token) = 0;
  // notifications/cancelled of request `request_id` (any JSON value the client sent).
  virtual void cancel(const json& request_id) = 0;
};

// Handles one line from the client (blank lines are ignored).
void handle_line(const std::string& line, McpPeer& peer);

json result_message(const json& id, json result);
json error_message(const json& id, int code, const std::string& message);
// `message` as one line of the transport (without the newline). Bytes that are not UTF-8 (a
// command's output may hold any) are replaced, never an exception.
std::string encode(const json& message);

}  // namespace codexd::client::mcp
