#include "client/mcp/mcp_protocol.h"

#include "client/mcp/mcp_tools.h"

namespace codexd::client::mcp {
namespace {

// The MCP revisions whose tools part this server implements; an unknown request gets the newest.
constexpr const char* kProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

json initialize_result(const json& params) {
  std::string version = kProtocolVersions[0];
  if (params.is_object() && params.contains("protocolVersion") && params["protocolVersion"].is_string()) {
    for (const char* v : kProtocolVersions) {
      if (params["protocolVersion"] == v) version = v;
    }
  }
  return {{"protocolVersion", version},
          {"capabilities", {{"tools", {{"listChanged", false}}}}},
          {"serverInfo", {{"name", "codexd"}, {"title", "codexd (execution daemon)"}, {"version", "0.1.0"}}},
          {"instructions",
           "Run shell commands through codexd: exec_command starts one (it is checked against the exec policy, may wait "
           "for a reviewer's approval, and runs in codexd's sandbox); a command still running after yield_time_ms returns "
           "a session ID for write_stdin (input, or empty chars to poll), list_sessions and kill_session."}};
}

void handle_notification(const std::string& method, const json& params, McpPeer& peer) {
  if (method != "notifications/cancelled" || !params.is_object() || !params.contains("requestId")) return;
  peer.cancel(params["requestId"]);
}

void call_tool(const json& id, const json& params, McpPeer& peer) {
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
    return peer.send(error_message(id, kInvalidParams, "tools/call needs `name`, the tool to call"));
  }
  const std::string name = params["name"].get<std::string>();
  bool exists = false;
  for (const auto& tool : tool_definitions()) exists = exists || tool["name"] == name;
  if (!exists) return peer.send(error_message(id, kInvalidParams, "unknown tool: " + name));
  std::optional<json> token;
  if (params.contains("_meta") && params["_meta"].is_object() && params["_meta"].contains("progressToken")) {
    token = params["_meta"]["progressToken"];
  }
  peer.call_tool(id, name, params.value("arguments", json::object()), std::move(token));
}

}  // namespace

void handle_line(const std::string& line, McpPeer& peer) {
  if (line.find_first_not_of(" \t\r") == std::string::npos) return;
  json message = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded()) return peer.send(error_message(nullptr, kParseError, "parse error: the line is not JSON"));
  if (message.is_array()) {
    return peer.send(error_message(nullptr, kInvalidRequest, "batches are not supported; send one message per line"));
  }
  if (!message.is_object() || !message.contains("method") || !message["method"].is_string()) {
    // A response to something we sent (we send no requests) or garbage: answer only if it has an id.
    if (message.is_object() && message.contains("id") && !message.contains("result") && !message.contains("error")) {
      peer.send(error_message(message["id"], kInvalidRequest, "invalid request: `method` must be a string"));
    }
    return;
  }
  const std::string method = message["method"].get<std::string>();
  const json params = message.value("params", json::object());
  if (!message.contains("id")) return handle_notification(method, params, peer);
  const json id = message["id"];
  if (!id.is_string() && !id.is_number_integer()) {
    return peer.send(error_message(nullptr, kInvalidRequest, "invalid request: `id` must be a string or an integer"));
  }
  if (method == "initialize") return peer.send(result_message(id, initialize_result(params)));
  if (method == "ping") return peer.send(result_message(id, json::object()));
  if (method == "tools/list") return peer.send(result_message(id, {{"tools", tool_definitions()}}));
  if (method == "tools/call") return call_tool(id, params, peer);
  peer.send(error_message(id, kMethodNotFound, "method not found: " + method));
}

json result_message(const json& id, json result) { return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}; }

json error_message(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

std::string encode(const json& message) { return message.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace codexd::client::mcp
