#include "client/mcp/mcp_server.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/mcp/mcp_tools.h"

namespace codexd::client::mcp {
namespace {

// The MCP revisions whose tools part this server implements; an unknown request gets the newest.
constexpr const char* kProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
constexpr auto kProgressInterval = std::chrono::seconds(2);

// JSON-RPC 2.0 error codes.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;

class Server {
 public:
  explicit Server(const ClientOptions& options)
      : options_(options), channel_(connect(options)), workdir_(std::filesystem::current_path().string()) {}

  int run() {
    std::thread progress([this] { send_progress_until_stopped(); });
    std::string line;
    while (std::getline(std::cin, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      handle_line(line);
    }
    // The client closed stdin: abandon what is in flight (the commands keep running, as in
    // Codex when a turn ends) and wait until gRPC has said so for each.
    std::unique_lock lock(mutex_);
    stopping_ = true;
    for (auto& [id, call] : in_flight_) call.call->cancel();
    changed_.notify_all();
    changed_.wait(lock, [this] { return in_flight_.empty(); });
    lock.unlock();
    progress.join();
    return 0;
  }

 private:
  struct InFlight {
    json id;
    std::unique_ptr<ToolCall> call;
    std::optional<json> progress_token;
    std::chrono::steady_clock::time_point started;
    bool cancelled = false;
    long progress_sent = 0;  // progress must increase from one notification to the next
  };

  void write(const json& message) {
    // Output and messages may hold bytes that are not UTF-8: replaced, never an exception.
    std::string text = message.dump(-1, ' ', false, json::error_handler_t::replace);
    std::lock_guard lock(write_mutex_);
    text.push_back('\n');
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
  void reply(const json& id, json result) { write({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}); }
  void reply_error(const json& id, int code, const std::string& message) {
    write({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
  }

  void handle_line(const std::string& line) {
    json message = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (message.is_discarded()) return reply_error(nullptr, kParseError, "parse error: the line is not JSON");
    if (message.is_array()) return reply_error(nullptr, kInvalidRequest, "batches are not supported; send one message per line");
    if (!message.is_object() || !message.contains("method") || !message["method"].is_string()) {
      // A response to something we sent (we send no requests) or garbage: answer only if it has an id.
      if (message.is_object() && message.contains("id") && !message.contains("result") && !message.contains("error")) {
        reply_error(message["id"], kInvalidRequest, "invalid request: `method` must be a string");
      }
      return;
    }
    const std::string method = message["method"].get<std::string>();
    const json params = message.value("params", json::object());
    if (!message.contains("id")) return handle_notification(method, params);
    const json id = message["id"];
    if (!id.is_string() && !id.is_number_integer()) return reply_error(nullptr, kInvalidRequest, "invalid request: `id` must be a string or an integer");
    if (method == "initialize") return reply(id, initialize_result(params));
    if (method == "ping") return reply(id, json::object());
    if (method == "tools/list") return reply(id, {{"tools", tool_definitions()}});
    if (method == "tools/call") return call_tool(id, params);
    reply_error(id, kMethodNotFound, "method not found: " + method);
  }

  void handle_notification(const std::string& method, const json& params) {
    if (method != "notifications/cancelled" || !params.is_object() || !params.contains("requestId")) return;
    std::lock_guard lock(mutex_);
    auto it = in_flight_.find(params["requestId"].dump());
    if (it == in_flight_.end()) return;  // already answered: nothing to do
    it->second.cancelled = true;         // and no answer is sent for it
    it->second.call->cancel();
  }

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

  void call_tool(const json& id, const json& params) {
    if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
      return reply_error(id, kInvalidParams, "tools/call needs `name`, the tool to call");
    }
    const std::string name = params["name"].get<std::string>();
    const json known = tool_definitions();
    bool exists = false;
    for (const auto& tool : known) exists = exists || tool["name"] == name;
    if (!exists) return reply_error(id, kInvalidParams, "unknown tool: " + name);
    std::optional<json> token;
    if (params.contains("_meta") && params["_meta"].is_object() && params["_meta"].contains("progressToken")) {
      token = params["_meta"]["progressToken"];
    }
    const std::string key = id.dump();
    {
      std::lock_guard lock(mutex_);
      if (in_flight_.count(key)) return reply_error(id, kInvalidRequest, "a request with this id is still in flight");
      // Registered before the RPC starts: its answer may come on a gRPC thread at once.
      in_flight_[key] = InFlight{id, nullptr, token, std::chrono::steady_clock::now()};
    }
    auto call = start_tool_call(channel_, options_, workdir_, name, params.value("arguments", json::object()),
                                [this, key](json result) { finish(key, std::move(result)); });
    std::lock_guard lock(mutex_);
    auto it = in_flight_.find(key);
    if (it != in_flight_.end()) {
      it->second.call = std::move(call);
      if (stopping_ || it->second.cancelled) it->second.call->cancel();
    }
  }

  void finish(const std::string& key, json result) {
    std::unique_lock lock(mutex_);
    auto it = in_flight_.find(key);
    if (it == in_flight_.end()) return;
    const bool answer = !it->second.cancelled && !stopping_;
    const json id = it->second.id;
    // The call object may still be being stored by call_tool: keep the entry until it is.
    std::unique_ptr<ToolCall> call = std::move(it->second.call);
    in_flight_.erase(it);
    changed_.notify_all();
    lock.unlock();
    if (answer) reply(id, std::move(result));
    call.reset();
  }

  void send_progress_until_stopped() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      changed_.wait_for(lock, kProgressInterval);
      if (stopping_) break;
      const auto now = std::chrono::steady_clock::now();
      std::vector<json> notes;
      for (auto& [key, call] : in_flight_) {
        if (!call.progress_token || call.cancelled) continue;
        const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - call.started);
        if (waited < kProgressInterval) continue;
        const uint32_t approval_after = call.call ? call.call->waiting_for_approval_after_ms() : 0;
        const long seconds = static_cast<long>(waited.count() / 1000);
        if (seconds <= call.progress_sent) continue;
        call.progress_sent = seconds;
        std::string message = approval_after > 0 && waited.count() > approval_after
                                  ? "waiting for a reviewer to approve the command (" + std::to_string(seconds) + " s)"
                                  : "running (" + std::to_string(seconds) + " s)";
        notes.push_back({{"jsonrpc", "2.0"},
                         {"method", "notifications/progress"},
                         {"params", {{"progressToken", *call.progress_token}, {"progress", seconds}, {"message", message}}}});
      }
      lock.unlock();
      for (const auto& note : notes) write(note);
      lock.lock();
    }
  }

  ClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::string workdir_;
  std::mutex write_mutex_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, InFlight> in_flight_;  // by the request id's JSON text
  bool stopping_ = false;
};

}  // namespace

int serve_stdio(const ClientOptions& options) {
  std::ios::sync_with_stdio(false);
  Server server(options);
  return server.run();
}

}  // namespace codexd::client::mcp
