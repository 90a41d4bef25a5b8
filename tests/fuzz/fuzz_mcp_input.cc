// `codexctl mcp`'s input on arbitrary bytes: each line goes through handle_line
// (client/mcp/mcp_protocol.h), exactly as the stdio server feeds it, with a peer standing in
// for the server. A tools/call is checked and turned into its codexd request by tool_request
// (client/mcp/mcp_tools.h), as start_tool_call does; sending that RPC needs a daemon and is
// not fuzzed here. Every message the server would write is encoded as it would be. Never a
// crash or an exception; every answer is JSON-RPC 2.0.
#include <cstddef>
#include <cstdint>
#include <string>

#include "client/mcp/mcp_protocol.h"
#include "client/mcp/mcp_tools.h"

namespace {

using codexd::client::mcp::json;

class FuzzPeer : public codexd::client::mcp::McpPeer {
 public:
  void send(const json& message) override {
    if (!message.is_object() || message.value("jsonrpc", "") != "2.0") __builtin_trap();
    (void)codexd::client::mcp::encode(message);
  }
  void call_tool(const json& id, const std::string& name, const json& arguments, std::optional<json> token) override {
    if (!id.is_string() && !id.is_number_integer()) __builtin_trap();
    auto request = codexd::client::mcp::tool_request("/home/fuzz/project", name, arguments);
    if (!request.ok()) {
      send(codexd::client::mcp::result_message(id, codexd::client::mcp::text_result(request.status().message(), true)));
    } else if (const auto* exec = std::get_if<codexd::v1::ExecCommandRequest>(&*request)) {
      if (exec->cmd().empty() || exec->workdir().empty() || exec->workdir()[0] != '/') __builtin_trap();
    }
    if (token) (void)codexd::client::mcp::encode(*token);
  }
  void cancel(const json& request_id) override { (void)request_id.dump(); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzPeer peer;
  const std::string input(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start <= input.size()) {  // std::getline's lines: split at '\n', no empty last one
    size_t end = input.find('\n', start);
    if (end == std::string::npos) end = input.size();
    if (end > start || end < input.size()) codexd::client::mcp::handle_line(input.substr(start, end - start), peer);
    start = end + 1;
  }
  return 0;
}
