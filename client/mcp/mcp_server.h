// `codexctl mcp`: a Model Context Protocol server on stdin/stdout (JSON-RPC 2.0, one message
// per line, the MCP stdio transport) backed by codexd. It answers initialize, ping,
// tools/list and tools/call; honours notifications/cancelled (the RPC is abandoned, the command
// keeps running) and sends notifications/progress while a call waits when the caller gave a
// progressToken. Several calls may be in flight at once; none holds a thread while it waits
// (gRPC's callback API), and stdout carries nothing but protocol messages.
#pragma once

#include "client/connection.h"

namespace codexd::client::mcp {

// Serves until stdin ends; returns the exit code.
int serve_stdio(const ClientOptions& options);

}  // namespace codexd::client::mcp
