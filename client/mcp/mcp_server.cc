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

#include "client/mcp/mcp_calls.h"
#include "client/mcp/mcp_protocol.h"

namespace codexd::client::mcp {
namespace {

constexpr auto kProgressInterval = std::chrono::seconds(2);

class Server : public McpPeer {
 public:
  explicit Server(const ClientOptions& options)
      : options_(options), channel_(connect(options)), workdir_(std::filesystem::current_path().string()) {}

  int run() {
    std::thread progress([this] { send_progress_until_stopped(); });
    std::string line;
    while (std::getline(std::cin, line)) handle_line(line, *this);
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

  void send(const json& message) override {
    std::string text = encode(message);
    std::lock_guard lock(write_mutex_);
    text.push_back('\n');
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }

  void cancel(const json& request_id) override {
    std::lock_guard lock(mutex_);
    auto it = in_flight_.find(request_id.dump());
    if (it == in_flight_.end()) return;  // already answered: nothing to do
    it->second.cancelled = true;         // and no answer is sent for it
    it->second.call->cancel();
  }

  void call_tool(const json& id, const std::string& name, const json& arguments, std::optional<json> token) override {
    const std::string key = id.dump();
    {
      std::lock_guard lock(mutex_);
      if (in_flight_.count(key)) return send(error_message(id, kInvalidRequest, "a request with this id is still in flight"));
      // Registered before the RPC starts: its answer may come on a gRPC thread at once.
      in_flight_[key] = InFlight{id, nullptr, std::move(token), std::chrono::steady_clock::now()};
    }
    auto call = start_tool_call(channel_, options_, workdir_, name, arguments,
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
    if (answer) send(result_message(id, std::move(result)));
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
      for (const auto& note : notes) send(note);
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
