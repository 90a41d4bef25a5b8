// The tools `codexctl mcp` offers, with Codex's unified-exec names, parameter schemas and
// result text (exec_command, write_stdin), plus list_sessions and kill_session: their
// definitions, and each call's JSON arguments checked and turned into the one codexd request
// it makes (mcp_calls.h sends it). Argument errors are values, reported to the model as an
// error result, never thrown. Neither a daemon nor gRPC is needed here.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <variant>

#include "base/status.h"
#include "codexd/v1/exec.pb.h"

namespace codexd::client::mcp {

using nlohmann::json;

// The `tools` array of a tools/list answer.
json tool_definitions();

// An MCP CallToolResult: {content: [{type: text, text}], isError, structuredContent?}.
json text_result(const std::string& text, bool is_error, std::optional<json> structured = std::nullopt);

// The request each tool sends: exec_command, write_stdin, list_sessions, kill_session.
using ToolRequest = std::variant<v1::ExecCommandRequest, v1::WriteStdinRequest, v1::ListSessionsRequest, v1::CancelRequest>;

// Tool `name`'s `arguments` as its request, or (INVALID_ARGUMENT) the first problem as the
// model should read it ("exec_command: `cmd` must be a string"; an unknown tool names the
// tools). `workdir` is the turn's working directory: where relative `workdir` arguments resolve.
Result<ToolRequest> tool_request(const std::string& workdir, const std::string& name, const json& arguments);

}  // namespace codexd::client::mcp
