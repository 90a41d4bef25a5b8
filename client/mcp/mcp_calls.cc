#include "client/mcp/mcp_calls.h"

#include <algorithm>
#include <utility>

#include "codexd/v1/exec.grpc.pb.h"

namespace codexd::client::mcp {
namespace {

json exec_structured(const v1::ExecResult& r) {
  json out = {{"wall_time_seconds", r.wall_time_seconds()},
              {"original_token_count", r.original_token_count()},
              {"output", r.output()}};
  if (!r.chunk_id().empty()) out["chunk_id"] = r.chunk_id();
  if (r.has_exit_code()) out["exit_code"] = r.exit_code();
  if (r.has_session_id()) out["session_id"] = r.session_id();
  return out;
}

// A rejection (policy, reviewer, no sandbox) is the daemon's text for the model, as an error.
json exec_answer(const grpc::Status& status, const v1::ExecResult& result, const std::string& failure_prefix,
                 const std::string& not_found_text) {
  if (!status.ok()) {
    if (status.error_code() == grpc::StatusCode::NOT_FOUND && !not_found_text.empty()) return text_result(not_found_text, true);
    return text_result(failure_prefix + status.error_message(), true);
  }
  if (result.rejection().reason() != v1::Rejection::REASON_UNSPECIFIED) return text_result(result.text(), true);
  return text_result(result.text(), false, exec_structured(result));
}

// One unary Exec RPC through gRPC's callback API: no thread waits for it.
template <typename Request, typename Response>
class UnaryCall : public ToolCall {
 public:
  using Answer = std::function<json(const grpc::Status&, const Response&)>;
  using Method = void (v1::Exec::Stub::async::*)(grpc::ClientContext*, const Request*, Response*,
                                                  std::function<void(grpc::Status)>);

  UnaryCall(const std::shared_ptr<grpc::Channel>& channel, const ClientOptions& options, Request request,
            uint32_t approval_after_ms)
      : state_(std::make_shared<State>()), approval_after_ms_(approval_after_ms) {
    state_->stub = v1::Exec::NewStub(channel);
    state_->request = std::move(request);
    prepare(state_->context, options);
  }
  void start(Method method, Answer answer, ToolDone done) {
    std::shared_ptr<State> state = state_;
    ((*state->stub->async()).*method)(&state->context, &state->request, &state->response,
                                     [state, answer = std::move(answer), done = std::move(done)](grpc::Status status) {
                                       done(answer(status, state->response));
                                     });
  }
  void cancel() override { state_->context.TryCancel(); }
  uint32_t waiting_for_approval_after_ms() const override { return approval_after_ms_; }

 private:
  struct State {
    std::unique_ptr<v1::Exec::Stub> stub;
    grpc::ClientContext context;
    Request request;
    Response response;
  };
  std::shared_ptr<State> state_;
  uint32_t approval_after_ms_;
};

std::unique_ptr<ToolCall> start_call(const std::shared_ptr<grpc::Channel>& channel, const ClientOptions& options,
                                     v1::ExecCommandRequest request, ToolDone done) {
  // The daemon clamps the yield to [250, 30000] (default 10000): a longer wait is a reviewer's.
  const uint32_t yield_ms = std::clamp<uint32_t>(request.has_yield_time_ms() ? request.yield_time_ms() : 10'000, 250, 30'000);
  const std::string prefix = "exec_command failed for `" + request.cmd() + "`: ";
  auto call = std::make_unique<UnaryCall<v1::ExecCommandRequest, v1::ExecResult>>(channel, options, std::move(request),
                                                                                   yield_ms + 1000);
  call->start(&v1::Exec::Stub::async::ExecCommand,
              [prefix](const grpc::Status& s, const v1::ExecResult& r) { return exec_answer(s, r, prefix, ""); }, std::move(done));
  return call;
}

std::unique_ptr<ToolCall> start_call(const std::shared_ptr<grpc::Channel>& channel, const ClientOptions& options,
                                     v1::WriteStdinRequest request, ToolDone done) {
  const std::string unknown = "write_stdin failed: Unknown process id " + std::to_string(request.session_id());
  auto call = std::make_unique<UnaryCall<v1::WriteStdinRequest, v1::ExecResult>>(channel, options, std::move(request), 0);
  call->start(&v1::Exec::Stub::async::WriteStdin,
              [unknown](const grpc::Status& s, const v1::ExecResult& r) { return exec_answer(s, r, "write_stdin failed: ", unknown); },
              std::move(done));
  return call;
}

std::string session_line(const v1::SessionInfo& s) {
  std::string command;
  for (const auto& a : s.argv()) command += (command.empty() ? "" : " ") + a;
  std::string state = s.running() ? "running" : s.has_exit_code() ? "exited with code " + std::to_string(s.exit_code()) : "exited";
  return "session ID " + std::to_string(s.session_id()) + ": " + state + (s.tty() ? ", tty" : "") + ", in " + s.workdir() +
         ": " + command;
}

std::unique_ptr<ToolCall> start_call(const std::shared_ptr<grpc::Channel>& channel, const ClientOptions& options,
                                     v1::ListSessionsRequest request, ToolDone done) {
  auto call = std::make_unique<UnaryCall<v1::ListSessionsRequest, v1::ListSessionsResponse>>(channel, options,
                                                                                            std::move(request), 0);
  call->start(&v1::Exec::Stub::async::ListSessions,
              [](const grpc::Status& s, const v1::ListSessionsResponse& r) {
                if (!s.ok()) return text_result("list_sessions failed: " + s.error_message(), true);
                std::string text = r.sessions().empty() ? "No sessions." : std::to_string(r.sessions_size()) + " session(s):";
                json sessions = json::array();
                for (const auto& session : r.sessions()) {
                  text += "\n" + session_line(session);
                  json entry = {{"session_id", session.session_id()}, {"command", session.argv()},
                                {"workdir", session.workdir()}, {"tty", session.tty()},
                                {"running", session.running()}, {"agent_id", session.agent_id()}};
                  if (session.has_exit_code()) entry["exit_code"] = session.exit_code();
                  sessions.push_back(std::move(entry));
                }
                return text_result(text, false, json{{"sessions", sessions}});
              },
              std::move(done));
  return call;
}

std::unique_ptr<ToolCall> start_call(const std::shared_ptr<grpc::Channel>& channel, const ClientOptions& options,
                                     v1::CancelRequest request, ToolDone done) {
  std::string what = "SIGTERM (SIGKILL follows after 2 s if it is still running)";
  if (request.mode() == v1::CancelRequest::INTERRUPT) what = "SIGINT";
  if (request.mode() == v1::CancelRequest::KILL) what = "SIGKILL";
  const std::string session = "session ID " + std::to_string(request.session_id());
  auto call = std::make_unique<UnaryCall<v1::CancelRequest, v1::CancelResponse>>(channel, options, std::move(request), 0);
  call->start(&v1::Exec::Stub::async::Cancel,
              [what, session](const grpc::Status& s, const v1::CancelResponse& r) {
                if (s.error_code() == grpc::StatusCode::NOT_FOUND) return text_result("kill_session failed: Unknown " + session, true);
                if (!s.ok()) return text_result("kill_session failed: " + s.error_message(), true);
                return text_result(r.was_running() ? "Sent " + what + " to " + session + "."
                                                   : "The process of " + session + " had already exited.",
                                   false);
              },
              std::move(done));
  return call;
}

}  // namespace

std::unique_ptr<ToolCall> start_tool_call(const std::shared_ptr<grpc::Channel>& channel, const ClientOptions& options,
                                          const std::string& workdir, const std::string& name, const json& arguments,
                                          ToolDone done) {
  Result<ToolRequest> request = tool_request(workdir, name, arguments);
  if (!request.ok()) {
    done(text_result(request.status().message(), true));
    return nullptr;
  }
  return std::visit(
      [&](auto& r) { return start_call(channel, options, std::move(r), std::move(done)); }, *request);
}

}  // namespace codexd::client::mcp
