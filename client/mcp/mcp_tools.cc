#include "client/mcp/mcp_tools.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <utility>

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

// Each tool's arguments checked and turned into its request: the first problem is the error.
Result<ToolRequest> exec_command_request(const std::string& turn_cwd, const json& arguments) {
  Arguments args("exec_command", arguments,
                 {"cmd", "workdir", "shell", "login", "tty", "yield_time_ms", "max_output_tokens", "sandbox_permissions",
                  "justification", "prefix_rule"});
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
  if (args.error()) return InvalidArgument(*args.error());
  v1::ExecCommandRequest request;
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
  return ToolRequest(std::move(request));
}

Result<ToolRequest> write_stdin_request(const json& arguments) {
  Arguments args("write_stdin", arguments, {"session_id", "chars", "yield_time_ms", "max_output_tokens"});
  auto id = args.integer("session_id", 0, kMaxI32);
  if (!args.error() && !id) args.fail("`session_id` is required: the id exec_command returned");
  auto chars = args.string("chars");
  auto yield = args.integer("yield_time_ms", 0, kMaxU32);
  auto tokens = args.integer("max_output_tokens", 0, kMaxU32);
  if (args.error()) return InvalidArgument(*args.error());
  v1::WriteStdinRequest request;
  request.set_session_id(static_cast<int32_t>(*id));
  request.set_chars(chars.value_or(""));
  if (yield) request.set_yield_time_ms(static_cast<uint32_t>(*yield));
  if (tokens) request.set_max_output_tokens(static_cast<uint32_t>(*tokens));
  return ToolRequest(std::move(request));
}

Result<ToolRequest> list_sessions_request(const json& arguments) {
  Arguments args("list_sessions", arguments, {});
  if (args.error()) return InvalidArgument(*args.error());
  return ToolRequest(v1::ListSessionsRequest());
}

Result<ToolRequest> kill_session_request(const json& arguments) {
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
  if (args.error()) return InvalidArgument(*args.error());
  request.set_session_id(static_cast<int32_t>(*id));
  return ToolRequest(std::move(request));
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

Result<ToolRequest> tool_request(const std::string& workdir, const std::string& name, const json& arguments) {
  if (name == "exec_command") return exec_command_request(workdir, arguments);
  if (name == "write_stdin") return write_stdin_request(arguments);
  if (name == "list_sessions") return list_sessions_request(arguments);
  if (name == "kill_session") return kill_session_request(arguments);
  return InvalidArgument("unknown tool `" + name + "`; the tools are exec_command, write_stdin, list_sessions and kill_session");
}

}  // namespace codexd::client::mcp
