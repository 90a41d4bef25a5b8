// `codexctl mcp`'s line handling and tool argument checking, without stdio or a daemon
// (client/mcp/mcp_protocol.h, client/mcp/mcp_tools.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "client/mcp/mcp_protocol.h"
#include "client/mcp/mcp_tools.h"

namespace codexd::client::mcp {
namespace {

using ::testing::HasSubstr;

struct RecordingPeer : McpPeer {
  void send(const json& message) override { sent.push_back(message); }
  void call_tool(const json& id, const std::string& name, const json& arguments, std::optional<json> token) override {
    calls.push_back({{"id", id}, {"name", name}, {"arguments", arguments}, {"token", token.value_or(nullptr)}});
  }
  void cancel(const json& request_id) override { cancelled.push_back(request_id); }
  std::vector<json> sent, calls, cancelled;
};

TEST(McpProtocol, MalformedLinesGetJsonRpcErrors) {
  RecordingPeer peer;
  handle_line("not json", peer);
  handle_line("[]", peer);
  handle_line(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})", peer);
  handle_line(R"({"jsonrpc":"2.0","id":3,"method":"nope"})", peer);
  handle_line(R"({"jsonrpc":"2.0","id":4,"result":{}})", peer);  // a response: no answer
  handle_line("  \r", peer);                                        // blank: ignored
  ASSERT_EQ(peer.sent.size(), 4u);
  EXPECT_EQ(peer.sent[0]["error"]["code"], kParseError);
  EXPECT_TRUE(peer.sent[0]["id"].is_null());
  EXPECT_EQ(peer.sent[1]["error"]["code"], kInvalidRequest);
  EXPECT_EQ(peer.sent[2]["error"]["code"], kInvalidRequest);
  EXPECT_EQ(peer.sent[3]["error"]["message"], "method not found: nope");
  EXPECT_EQ(peer.sent[3]["id"], 3);
}

TEST(McpProtocol, InitializeAnswersTheClientsRevisionWhenKnown) {
  RecordingPeer peer;
  handle_line(R"({"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2025-03-26"}})", peer);
  handle_line(R"({"jsonrpc":"2.0","id":"b","method":"initialize","params":{"protocolVersion":"1999-01-01"}})", peer);
  ASSERT_EQ(peer.sent.size(), 2u);
  EXPECT_EQ(peer.sent[0]["result"]["protocolVersion"], "2025-03-26");
  EXPECT_EQ(peer.sent[1]["result"]["protocolVersion"], "2025-11-25");
}

TEST(McpProtocol, ToolCallsAndCancellationsReachThePeer) {
  RecordingPeer peer;
  handle_line(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"exec_command","arguments":{"cmd":"ls"},"_meta":{"progressToken":"t"}}})",
              peer);
  handle_line(R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"rm_rf"}})", peer);
  handle_line(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}})", peer);
  ASSERT_EQ(peer.calls.size(), 1u);
  EXPECT_EQ(peer.calls[0]["id"], 7);
  EXPECT_EQ(peer.calls[0]["arguments"]["cmd"], "ls");
  EXPECT_EQ(peer.calls[0]["token"], "t");
  ASSERT_EQ(peer.sent.size(), 1u);
  EXPECT_EQ(peer.sent[0]["error"]["code"], kInvalidParams);
  EXPECT_EQ(peer.cancelled, std::vector<json>{7});
}

TEST(McpProtocol, EncodeReplacesBytesThatAreNotUtf8) {
  EXPECT_EQ(encode(result_message(1, text_result("a\xff", false))),
            "{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{\"content\":[{\"text\":\"a\xEF\xBF\xBD\",\"type\":\"text\"}],\"isError\":false}}");
}

TEST(McpTools, ArgumentsBecomeTheRequest) {
  auto exec = tool_request("/home/u/p", "exec_command",
                           {{"cmd", "ls"}, {"workdir", "sub/../d"}, {"yield_time_ms", 250.0}, {"sandbox_permissions", "require_escalated"}});
  ASSERT_TRUE(exec.ok()) << exec.status().message();
  const auto& r = std::get<v1::ExecCommandRequest>(*exec);
  EXPECT_EQ(r.workdir(), "/home/u/p/d");
  EXPECT_EQ(r.yield_time_ms(), 250u);
  EXPECT_EQ(r.sandbox_permissions(), v1::REQUIRE_ESCALATED);

  auto kill = tool_request("/", "kill_session", {{"session_id", 4}, {"signal", "interrupt"}});
  ASSERT_TRUE(kill.ok());
  EXPECT_EQ(std::get<v1::CancelRequest>(*kill).mode(), v1::CancelRequest::INTERRUPT);
}

TEST(McpTools, TheFirstBadArgumentIsTheError) {
  auto bad = tool_request("/", "exec_command", {{"cmd", 5}, {"yield_time_ms", -1}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "exec_command: `cmd` must be a string");
  EXPECT_THAT(tool_request("/", "write_stdin", json::object()).status().message(), HasSubstr("`session_id` is required"));
  EXPECT_THAT(tool_request("/", "list_sessions", {{"x", 1}}).status().message(), HasSubstr("unknown argument `x`"));
  EXPECT_THAT(tool_request("/", "nope", json::object()).status().message(), HasSubstr("the tools are exec_command"));
}

}  // namespace
}  // namespace codexd::client::mcp
