#include "tests/integration/exec_client.h"

#include <cstdio>
#include <regex>

namespace codexd::testing {

v1::ExecCommandRequest argv_request(const TestDaemon& daemon, std::vector<std::string> argv,
                                    std::optional<uint32_t> yield_ms) {
  v1::ExecCommandRequest request;
  for (auto& a : argv) request.add_argv(std::move(a));
  request.set_workdir(daemon.workspace());
  if (yield_ms) request.set_yield_time_ms(*yield_ms);
  return request;
}

v1::GetStatusResponse get_status(const std::shared_ptr<grpc::Channel>& channel) {
  auto admin = v1::Admin::NewStub(channel);
  grpc::ClientContext context;
  v1::GetStatusResponse status;
  auto called = admin->GetStatus(&context, {}, &status);
  EXPECT_TRUE(called.ok()) << called.error_code() << ": " << called.error_message();
  return status;
}

v1::ExecCommandRequest shell_request(const TestDaemon& daemon, const std::string& script, std::optional<uint32_t> yield_ms) {
  v1::ExecCommandRequest request;
  request.set_cmd(script);
  request.set_workdir(daemon.workspace());
  if (yield_ms) request.set_yield_time_ms(*yield_ms);
  return request;
}

ExecCall exec_command(v1::Exec::Stub& stub, const v1::ExecCommandRequest& request) {
  ExecCall call;
  grpc::ClientContext context;
  TestDaemon::label(context, "integration-test");
  call.status = stub.ExecCommand(&context, request, &call.result);
  return call;
}

void expect_serving(const TestDaemon& daemon) {
  auto stub = v1::Exec::NewStub(daemon.channel());
  auto call = exec_command(*stub, argv_request(daemon, {"/bin/echo", "still here"}));
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  EXPECT_EQ(call.result.output(), "still here\n");
}

ExecCall poll(v1::Exec::Stub& stub, int session_id, uint32_t yield_ms, std::optional<uint32_t> max_output_tokens) {
  ExecCall call;
  grpc::ClientContext context;
  v1::PollRequest request;
  request.set_session_id(session_id);
  request.set_yield_time_ms(yield_ms);
  if (max_output_tokens) request.set_max_output_tokens(*max_output_tokens);
  call.status = stub.Poll(&context, request, &call.result);
  return call;
}

ExecCall write_stdin(v1::Exec::Stub& stub, int session_id, const std::string& chars, std::optional<uint32_t> yield_ms) {
  ExecCall call;
  grpc::ClientContext context;
  v1::WriteStdinRequest request;
  request.set_session_id(session_id);
  request.set_chars(chars);
  if (yield_ms) request.set_yield_time_ms(*yield_ms);
  call.status = stub.WriteStdin(&context, request, &call.result);
  return call;
}

grpc::Status cancel(v1::Exec::Stub& stub, int session_id, v1::CancelRequest::Mode mode, std::optional<uint32_t> grace_ms,
                    bool* was_running) {
  grpc::ClientContext context;
  v1::CancelRequest request;
  request.set_session_id(session_id);
  request.set_mode(mode);
  if (grace_ms) request.set_grace_ms(*grace_ms);
  v1::CancelResponse response;
  auto status = stub.Cancel(&context, request, &response);
  if (was_running) *was_running = response.was_running();
  return status;
}

std::vector<v1::SessionInfo> list_sessions(v1::Exec::Stub& stub) {
  grpc::ClientContext context;
  v1::ListSessionsResponse response;
  auto status = stub.ListSessions(&context, v1::ListSessionsRequest(), &response);
  EXPECT_TRUE(status.ok()) << describe(status);
  return {response.sessions().begin(), response.sessions().end()};
}

Followed follow(v1::Exec::Stub& stub, const v1::ExecResult& first, const std::function<bool(const std::string&)>& done,
                int max_polls) {
  Followed f;
  f.last = first;
  f.output = first.output();
  f.exited = first.has_exit_code();
  EXPECT_TRUE(HasCodexText(first));
  const int id = first.session_id();
  // A hang guard only: each Poll returns at the first new output or the exit.
  for (int i = 0; i < max_polls && !f.exited && !done(f.output); ++i) {
    auto call = poll(stub, id, 10'000);
    if (!call.status.ok()) {
      f.status = call.status;
      return f;
    }
    EXPECT_TRUE(HasCodexText(call.result));
    f.output += call.result.output();
    f.last = call.result;
    f.exited = call.result.has_exit_code();
  }
  return f;
}

Followed follow_until_output(v1::Exec::Stub& stub, const v1::ExecResult& first, const std::string& marker) {
  return follow(stub, first, [&](const std::string& out) { return out.find(marker) != std::string::npos; });
}

Followed follow_until_exit(v1::Exec::Stub& stub, const v1::ExecResult& first) {
  return follow(stub, first, [](const std::string&) { return false; });
}

std::string codex_unified_text(const v1::ExecResult& r) {
  std::string text;
  if (!r.chunk_id().empty()) text += "Chunk ID: " + r.chunk_id() + "\n";
  char wall[64];
  std::snprintf(wall, sizeof wall, "Wall time: %.4f seconds\n", r.wall_time_seconds());
  text += wall;
  if (r.has_exit_code()) text += "Process exited with code " + std::to_string(r.exit_code()) + "\n";
  if (r.has_session_id()) text += "Process running with session ID " + std::to_string(r.session_id()) + "\n";
  text += "Original token count: " + std::to_string(r.original_token_count()) + "\n";
  text += "Output:\n";
  text += r.output();
  return text;
}

::testing::AssertionResult HasCodexText(const v1::ExecResult& r) {
  static const std::regex chunk("^[0-9a-f]{6}$");
  if (!std::regex_match(r.chunk_id(), chunk)) return ::testing::AssertionFailure() << "chunk id \"" << r.chunk_id() << "\"";
  if (r.has_exit_code() == r.has_session_id()) {
    return ::testing::AssertionFailure() << "exactly one of exit_code and session_id must be set:\n" << r.DebugString();
  }
  if (r.has_session_id() && (r.session_id() < 1000 || r.session_id() >= 100000)) {
    return ::testing::AssertionFailure() << "session id " << r.session_id() << " outside [1000, 100000)";
  }
  std::string expected = codex_unified_text(r);
  if (r.text() != expected) {
    return ::testing::AssertionFailure() << "text:\n" << r.text() << "\nexpected:\n" << expected;
  }
  return ::testing::AssertionSuccess();
}

uint64_t approx_tokens(const std::string& text) { return (text.size() + 3) / 4; }

std::string describe(const grpc::Status& status) {
  return std::to_string(static_cast<int>(status.error_code())) + ": " + status.error_message();
}

}  // namespace codexd::testing
