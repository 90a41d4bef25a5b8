// Thin synchronous helpers over the Exec stub for integration tests: build requests, make the
// calls, follow a session with Poll until a marker or its exit, and check ExecResult.text
// against Codex's tool-result format.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codexd/v1/admin.grpc.pb.h"
#include "codexd/v1/exec.grpc.pb.h"
#include "tests/support/test_daemon.h"

namespace codexd::testing {

struct ExecCall {
  grpc::Status status;
  v1::ExecResult result;
};

// Admin.GetStatus over `channel` (a failed call is a test failure).
v1::GetStatusResponse get_status(const std::shared_ptr<grpc::Channel>& channel);

// argv form in the daemon's workspace, with an explicit yield (ms).
v1::ExecCommandRequest argv_request(const TestDaemon& daemon, std::vector<std::string> argv,
                                    std::optional<uint32_t> yield_ms = std::nullopt);
// `cmd` form: [shell, -lc|-c, script].
v1::ExecCommandRequest shell_request(const TestDaemon& daemon, const std::string& script,
                                     std::optional<uint32_t> yield_ms = std::nullopt);

ExecCall exec_command(v1::Exec::Stub& stub, const v1::ExecCommandRequest& request);
// After a hostile client: a fresh channel still runs `echo` (a gtest assertion).
void expect_serving(const TestDaemon& daemon);
ExecCall poll(v1::Exec::Stub& stub, int session_id, uint32_t yield_ms,
              std::optional<uint32_t> max_output_tokens = std::nullopt);
ExecCall write_stdin(v1::Exec::Stub& stub, int session_id, const std::string& chars,
                     std::optional<uint32_t> yield_ms = std::nullopt);
grpc::Status cancel(v1::Exec::Stub& stub, int session_id, v1::CancelRequest::Mode mode,
                    std::optional<uint32_t> grace_ms = std::nullopt, bool* was_running = nullptr);
std::vector<v1::SessionInfo> list_sessions(v1::Exec::Stub& stub);

// What following a session produced: every output byte, every result's text check, the last result.
struct Followed {
  std::string output;
  v1::ExecResult last;
  bool exited = false;
  grpc::Status status;  // the first failing call, if any
};

// Polls (returns at the first output) until `done(output)` holds or the session exits. `first`
// is the ExecCommand result the session came from (its output counts). Bounded by `max_polls`.
Followed follow(v1::Exec::Stub& stub, const v1::ExecResult& first, const std::function<bool(const std::string&)>& done,
                int max_polls = 100);
Followed follow_until_output(v1::Exec::Stub& stub, const v1::ExecResult& first, const std::string& marker);
Followed follow_until_exit(v1::Exec::Stub& stub, const v1::ExecResult& first);

// Codex's unified-exec result text, rebuilt from the result's own fields:
//   Chunk ID: {6 hex}\nWall time: {%.4f} seconds\n[Process exited with code N\n |
//   Process running with session ID N\n]Original token count: N\nOutput:\n{output}
std::string codex_unified_text(const v1::ExecResult& result);
// text == codex_unified_text, chunk id is 6 lowercase hex, exactly one of exit/session is set.
::testing::AssertionResult HasCodexText(const v1::ExecResult& result);

// ceil(bytes / 4), Codex's approx_token_count.
uint64_t approx_tokens(const std::string& text);

// Status code and message in one printable value, for EXPECT_EQ.
std::string describe(const grpc::Status& status);

}  // namespace codexd::testing
