// codexctl daemon restart: a restart in place (RestartDaemon), then waiting for the new image
// to answer, so a script can go on as soon as the command returns.
#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "client/commands.h"
#include "codexd/v1/admin.grpc.pb.h"

namespace codexd::client {
namespace {

using Clock = std::chrono::steady_clock;

// GetStatus from the daemon that replaced the one which answered `restarted`, on a fresh
// connection each time (the old connection ends with the old image). Connections made during
// the exec wait in the listening socket's backlog for the new daemon; only an answer from the
// old one (it still serves while it hands its sessions over) makes us ask again.
std::optional<v1::GetStatusResponse> wait_for_new_daemon(const ClientOptions& options, int64_t old_started_at,
                                                         Clock::time_point deadline, grpc::Status* last) {
  while (Clock::now() < deadline) {
    auto stub = v1::Admin::NewStub(connect(options));
    grpc::ClientContext context;
    prepare(context, options);
    context.set_wait_for_ready(true);
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
    v1::GetStatusResponse status;
    *last = stub->GetStatus(&context, v1::GetStatusRequest(), &status);
    if (last->ok() && status.started_at_unix_ms() != old_started_at) return status;
    if (last->error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the old image is still going away
  }
  return std::nullopt;
}

}  // namespace

int run_daemon_restart(const ClientOptions& options, uint32_t timeout_ms) {
  v1::RestartDaemonResponse asked;
  auto status = call_unary<v1::Admin>(options, &v1::Admin::Stub::RestartDaemon, v1::RestartDaemonRequest(), &asked);
  if (!status.ok()) return report_rpc_error(status, options);
  if (!options.json) {
    std::printf("codexd (pid %d) is restarting in place with %s, keeping %u session(s)\n", asked.pid(),
                asked.executable().c_str(), asked.sessions_kept());
    std::fflush(stdout);
  }
  grpc::Status last;
  auto fresh = wait_for_new_daemon(options, asked.started_at_unix_ms(),
                                   Clock::now() + std::chrono::milliseconds(timeout_ms), &last);
  if (!fresh) {
    std::fprintf(stderr, "codexctl: codexd did not answer within %u ms of the restart (last: %s); see its log\n", timeout_ms,
                 last.ok() ? "the old daemon still answered" : last.error_message().c_str());
    return kExitRpcError;
  }
  const auto& adoption = fresh->adoption();
  if (options.json) {
    nlohmann::json out = {{"pid", fresh->pid()},
                          {"version", fresh->version()},
                          {"executable", asked.executable()},
                          {"sessions_kept", asked.sessions_kept()},
                          {"sessions_adopted", adoption.adopted()},
                          {"sessions_lost", nlohmann::json::array()},
                          {"started_at_unix_ms", fresh->started_at_unix_ms()}};
    for (const auto& lost : adoption.lost()) out["sessions_lost"].push_back(lost);
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("codexd %s restarted (pid %d): %u session(s) adopted", fresh->version().c_str(), fresh->pid(),
                adoption.adopted());
    if (adoption.lost_size() > 0) std::printf(", %d lost", adoption.lost_size());
    std::printf("\n");
    for (const auto& lost : adoption.lost()) std::printf("  lost: %s\n", lost.c_str());
  }
  return adoption.adopted() < asked.sessions_kept() ? kExitRpcError : 0;
}

}  // namespace codexd::client
