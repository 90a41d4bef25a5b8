#include "client/mcp/mcp_tools.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <utility>

#include "codexd/v1/exec.grpc.pb.h"

namespace codexd::client::mcp {
namespace {

// Codex's own wording for the parameters an agent's prompt was tuned on
// (codex-rs/tools/src/local_tool.rs; ../shared/reference/codex-runtime.md 1.1).
constexpr const char* kYieldDescription = "How long to wait (in milliseconds) for output before yielding.";
constexpr const char* kMaxTokensDescription = "Maximum number of tokens to return. Excess output will be truncated.";

json string_property(const char* description) { return {{"type", "string"}, {"description", description}}; }
json number_property(const char* description) { return {{"type", "number"}, {"description", description}}; }
json boolean_property(const char* description) { return {{"type", "boolean"}, {"description", description}}; }

// The structured form of a unified-exec answer (Codex's output schema for code-mode consumers).
json exec_output_schema() {
  return {{"type", "object"},
          {"properties",
           {{"chunk_id", {{"type", "string"}}},
            {"wall_time_seconds", {{"type", "number"}}},
            {"exit_code", {{"type", "integer"}}},
            {"session_id", {{"type", "integer"}}},
            {"original_token_count", {{"type", "integer"}}},
            {"output", {{"type", "string"}}}}},
          {"required", {"wall_time_seconds", "output"}}};
}

json exec_command_definition() {
  json properties = {
      {"cmd", string_property("Shell command to execute.")},
      {"workdir", string_property("Optional working directory to run the command in; defaults to the turn cwd.")},
      {"shell", string_property("Shell binary to launch. Defaults to the user's default shell.")},
      {"login", boolean_property("Whether to run the shell with -l/-i semantics. Defaults to true.")},
      {"tty", boolean_property("Whether to allocate a TTY for the command. Defaults to false (plain pipes); set to true "
                               "to open a PTY and access TTY process.")},
      {"yield_time_ms", number_property(kYieldDescription)},
      {"max_output_tokens", number_property(kMaxTokensDescription)},
      {"sandbox_permissions",
       {{"type", "string"},
        {"enum", {"use_default", "require_escalated"}},
        {"description", "Sandbox permissions for the command. Set to \"require_escalated\" to request running without "
                        "sandbox restrictions; defaults to \"use_default\"."}}},
      {"justification",
       string_property("Only set if sandbox_permissions is \"require_escalated\". A one-sentence yes/no question for the "
                       "reviewer saying why the command must run without the sandbox.")},
      {"prefix_rule",
       {{"type", "array"},
        {"items", {{"type", "string"}}},
        {"description", "Only with \"require_escalated\": a command prefix the reviewer may approve for good, e.g. "
                        "[\"git\", \"pull\"] or [\"pytest\"]."}}},
  };
  return {{"name", "exec_command"},
          {"description", "Runs a command in a PTY, returning output or a session ID for ongoing interaction."},
          {"inputSchema", {{"type", "object"}, {"properties", properties}, {"required", {"cmd"}}, {"additionalProperties", false}}},
          {"outputSchema", exec_output_schema()}};
}

json write_stdin_definition() {
  json properties = {
      {"session_id", number_property("Identifier of the running unified exec session.")},
      {"chars", string_property("Bytes to write to stdin (may be empty to poll).")},
      {"yield_time_ms", number_property(kYieldDescription)},
      {"max_output_tokens", number_property(kMaxTokensDescription)},
  };
  return {{"name", "write_stdin"},
          {"description", "Writes characters to an existing unified exec session and returns recent output."},
          {"inputSchema",
           {{"type", "object"}, {"properties", properties}, {"required", {"session_id"}}, {"additionalProperties", false}}},
          {"outputSchema", exec_output_schema()}};
}

json list_sessions_definition() {
  return {{"name", "list_sessions"},
          {"description", "Lists your exec_command sessions (running and recently exited) with their commands."},
          {"inputSchema", {{"type", "object"}, {"properties", json::object()}, {"additionalProperties", false}}}};
}

json kill_session_definition() {
  json properties = {
      {"session_id", number_property("Identifier of the unified exec session to stop.")},
      {"signal",
       {{"type", "string"},
        {"enum", {"terminate", "interrupt", "kill"}},
        {"description", "\"terminate\" (SIGTERM, then SIGKILL after 2 s; the default), \"interrupt\" (SIGINT) or \"kill\" "
                        "(SIGKILL), sent to the session's whole process group."}}},
  };
  return {{"name", "kill_session"},
          {"description", "Stops a running exec_command session."},
          {"inputSchema",
           {{"type", "object"}, {"properties", properties}, {"required", {"session_id"}}, {"additionalProperties", false}}}};
}

// Argument checking: the first problem, as the model should read it.
class Arguments {
 public:
  Arguments(const std::string& tool, const json& args, std::initializer_list<const char*> known) : tool_(tool), args_(args) {
    if (!args_.is_object()) {
      fail("arguments must be a JSON object");
      return;
    }
    for (const auto& [key, value] : args_.items()) {
      bool found = false;
      for (const char* k : known) found = found || key == k;
      if (!found) fail("unknown argument `" + key + "`");
    }
  }
  const std::optional<std::string>& error() const { return error_; }

  std::optional<std::string> string(const char* name) {
    const json* v = find(name);
    if (!v) return std::nullopt;
    if (!v->is_string()) return fail(std::string("`") + name + "` must be a string"), std::nullopt;
    return v->get<std::string>();
  }
  std::optional<bool> boolean(const char* name) {
    const json* v = find(name);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) return fail(std::string("`") + name + "` must be true or false"), std::nullopt;
    return v->get<bool>();
  }
  // A whole number in [min, max] (JSON numbers may come as 250.0).
  std::optional<int64_t> integer(const char* name, int64_t min, int64_t max) {
    const json* v = find(name);
    if (!v) return std::nullopt;
    double d = v->is_number() ? v->get<double>() : std::nan("");
    if (!v->is_number() || std::floor(d) != d || d < static_cast<double>(min) || d > static_cast<double>(max)) {
      fail(std::string("`") + name + "` must be a whole number from " + std::to_string(min) + " to " + std::to_string(max));
      return std::nullopt;
    }
    return static_cast<int64_t>(d);
  }
  std::optional<std::vector<std::string>> strings(const char* name) {
    const json* v = find(name);
    if (!v) return std::nullopt;
    std::vector<std::string> out;
    if (v->is_array()) {
      for (const auto& item : *v) {
        if (!item.is_string()) break;
        out.push_back(item.get<std::string>());
      }
    }
    if (!v->is_array() || out.size() != v->size()) return fail(std::string("`") + name + "` must be an array of strings"), std::nullopt;
    return out;
  }
  void fail(const std::string& message) {
    if (!error_) error_ = tool_ + ": " + message;
  }

 private:
  const json* find(const char* name) const {
    if (!args_.is_object()) return nullptr;
    auto it = args_.find(name);
    return it == args_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string tool_;
  const json& args_;
  std::optional<std::string> error_;
};

constexpr int64_t kMaxU32 = std::numeric_limits<uint32_t>::max();
constexpr int64_t kMaxI32 = std::numeric_limits<int32_t>::max();

std::string resolve_workdir(const std::string& turn_cwd, const std::string& workdir) {
  if (workdir.empty()) return turn_cwd;  // Codex: an empty string is treated as absent
  std::filesystem::path path(workdir);
  if (path.is_relative()) path = std::filesystem::path(turn_cwd) / path;
  return path.lexically_normal().string();
}

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

std::unique_ptr<ToolCall> start_exec_command(const std::shared_ptr<grpc::Channel>& channel, const ClientOptions& options,
                                             const std::string& turn_cwd, const json& arguments, ToolDone& done) {
  Arguments args("exec_command", arguments,
                 {"cmd", "workdir", "shell", "login", "tty", "yield_time_ms", "max_output_tokens", "sandbox_permissions",
                  "justification", "prefix_rule"});
  v1::ExecCommandRequest request;
  auto cmd = args.string("cmd");
  if (!args.error() && (!cmd || cmd->empty())) args.fail("`cmd` is required: the shell command to run");
  auto workdir = args.string("workdir");
  auto shell = args.string("shell");
  auto login = args.boolean("login");
  auto tty = args.boolean("tty");
  auto yield = args.integer("yield_time_ms", 0, kMaxU32);
  auto tokens = args.integer("max_output_tokens", 0, kMaxU32);
  auto permissions = args.string("sandbox_permissions");
  if (permissions && *permissions != "use_default" && *permissions != "require_escalated") {
    args.fail("`sandbox_permissions` must be \"use_default\" or \"require_escalated\" (got \"" + *permissions + "\")");
  }
  auto justification = args.string("justification");
  auto prefix_rule = args.strings("prefix_rule");
  if (args.error()) {
    done(text_result(*args.error(), true));
    return nullptr;
  }
  request.set_cmd(*cmd);
  request.set_workdir(resolve_workdir(turn_cwd, workdir.value_or("")));
  if (shell) request.set_shell(*shell);
  if (login) request.set_login(*login);
  request.set_tty(tty.value_or(false));
  if (yield) request.set_yield_time_ms(static_cast<uint32_t>(*yield));
  if (tokens) request.set_max_output_tokens(static_cast<uint32_t>(*tokens));
  request.set_sandbox_permissions(permissions == "require_escalated" ? v1::REQUIRE_ESCALATED : v1::USE_DEFAULT);
  if (justification) request.set_justification(*justification);
  if (prefix_rule) *request.mutable_prefix_rule() = {prefix_rule->begin(), prefix_rule->end()};

  // The daemon clamps the yield to [250, 30000] (default 10000): a longer wait is a reviewer's.
  const uint32_t yield_ms = std::clamp<uint32_t>(yield ? static_cast<uint32_t>(*yield) : 10'000, 250, 30'000);
  auto call = std::make_unique<UnaryCall<v1::ExecCommandRequest, v1::ExecResult>>(channel, options, std::move(request),
                                                                                   yield_ms + 1000);
  const std::string prefix = "exec_command failed for `" + *cmd + "`: ";
  call->start(&v1::Exec::Stub::async::ExecCommand,
              [prefix](const grpc::Status& s, const v1::ExecResult& r) { return exec_answer(s, r, prefix, ""); }, std::move(done));
  return call;
}

std::unique_ptr<ToolCall> start_write_stdin(const std::shared_ptr<grpc::Channel>& channel, const ClientOptions& options,
                                            const json& arguments, ToolDone& done) {
  Arguments args("write_stdin", arguments, {"session_id", "chars", "yield_time_ms", "max_output_tokens"});
  auto id = args.integer("session_id", 0, kMaxI32);
  if (!args.error() && !id) args.fail("`session_id` is required: the id exec_command returned");
  auto chars = args.string("chars");
  auto yield = args.integer("yield_time_ms", 0, kMaxU32);
  auto tokens = args.integer("max_output_tokens", 0, kMaxU32);
  if (args.error()) {
    done(text_result(*args.error(), true));
    return nullptr;
  }
  v1::WriteStdinRequest request;
  request.set_session_id(static_cast<int32_t>(*id));
  request.set_chars(chars.value_or(""));
  if (yield) request.set_yield_time_ms(static_cast<uint32_t>(*yield));
  if (tokens) request.set_max_output_tokens(static_cast<uint32_t>(*tokens));
  auto call = std::make_unique<UnaryCall<v1::WriteStdinRequest, v1::ExecResult>>(channel, options, std::move(request), 0);
  const std::string unknown = "write_stdin failed: Unknown process id " + std::to_string(*id);
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

std::unique_ptr<ToolCall> start_list_sessions(const std::shared_ptr<grpc::Channel>& channel, const ClientOptions& options,
                                              const json& arguments, ToolDone& done) {
  Arguments args("list_sessions", arguments, {});
  if (args.error()) {
    done(text_result(*args.error(), true));
    return nullptr;
  }
  auto call = std::make_unique<UnaryCall<v1::ListSessionsRequest, v1::ListSessionsResponse>>(channel, options,
                                                                                            v1::ListSessionsRequest(), 0);
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

std::unique_ptr<ToolCall> start_kill_session(const std::shared_ptr<grpc::Channel>& channel, const ClientOptions& options,
                                             const json& arguments, ToolDone& done) {
  Arguments args("kill_session", arguments, {"session_id", "signal"});
  auto id = args.integer("session_id", 0, kMaxI32);
  if (!args.error() && !id) args.fail("`session_id` is required");
  auto signal = args.string("signal");
  v1::CancelRequest request;
  if (!signal || *signal == "terminate") {
    request.set_mode(v1::CancelRequest::TERMINATE);
  } else if (*signal == "interrupt") {
    request.set_mode(v1::CancelRequest::INTERRUPT);
  } else if (*signal == "kill") {
    request.set_mode(v1::CancelRequest::KILL);
  } else {
    args.fail("`signal` must be \"terminate\", \"interrupt\" or \"kill\" (got \"" + *signal + "\")");
  }
  if (args.error()) {
    done(text_result(*args.error(), true));
    return nullptr;
  }
  request.set_session_id(static_cast<int32_t>(*id));
  const std::string what = !signal || *signal == "terminate" ? "SIGTERM (SIGKILL follows after 2 s if it is still running)"
                           : *signal == "interrupt"          ? "SIGINT"
                                                             : "SIGKILL";
  const std::string session = "session ID " + std::to_string(*id);
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

json tool_definitions() {
  return json::array({exec_command_definition(), write_stdin_definition(), list_sessions_definition(), kill_session_definition()});
}

json text_result(const std::string& text, bool is_error, std::optional<json> structured) {
  json result = {{"content", json::array({{{"type", "text"}, {"text", text}}})}, {"isError", is_error}};
  if (structured) result["structuredContent"] = std::move(*structured);
  return result;
}

std::unique_ptr<ToolCall> start_tool_call(const std::shared_ptr<grpc::Channel>& channel, const ClientOptions& options,
                                          const std::string& workdir, const std::string& name, const json& arguments,
                                          ToolDone done) {
  if (name == "exec_command") return start_exec_command(channel, options, workdir, arguments, done);
  if (name == "write_stdin") return start_write_stdin(channel, options, arguments, done);
  if (name == "list_sessions") return start_list_sessions(channel, options, arguments, done);
  if (name == "kill_session") return start_kill_session(channel, options, arguments, done);
  done(text_result("unknown tool `" + name + "`; the tools are exec_command, write_stdin, list_sessions and kill_session", true));
  return nullptr;
}

}  // namespace codexd::client::mcp
