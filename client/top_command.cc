// codexctl top: live sessions by CPU and memory, refreshed (like `docker stats`). CPU% is the
// session's CPU time since the previous refresh over the refresh's wall time (100% = one core).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include "base/shell_quote.h"
#include "client/commands.h"
#include "codexd/v1/exec.grpc.pb.h"

namespace codexd::client {
namespace {

struct Row {
  const v1::SessionInfo* session;
  double cpu_percent;
};

uint64_t cpu_usec(const v1::SessionInfo& s) { return s.usage().cpu_user_usec() + s.usage().cpu_system_usec(); }

void print_rows(std::vector<Row>& rows) {
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.cpu_percent != b.cpu_percent) return a.cpu_percent > b.cpu_percent;
    return a.session->usage().peak_memory_bytes() > b.session->usage().peak_memory_bytes();
  });
  std::printf("%-7s %-12s %7s %9s %8s %5s %s\n", "ID", "AGENT", "CPU%", "PEAK-MEM", "CPU", "PIDS", "COMMAND");
  for (const auto& row : rows) {
    const auto& s = *row.session;
    const UsageColumns u = usage_columns(s.usage());
    char percent[16];
    if (s.usage().measured()) std::snprintf(percent, sizeof percent, "%.1f", row.cpu_percent);
    else std::snprintf(percent, sizeof percent, "-");
    std::printf("%-7d %-12.12s %7s %9s %8s %5s %s\n", s.session_id(), s.agent_id().c_str(), percent, u.memory.c_str(),
                u.cpu.c_str(), u.processes.c_str(), shell_join_range(s.argv()).c_str());
  }
  std::fflush(stdout);
}

}  // namespace

int run_top(const ClientOptions& options, bool all_users, uint32_t interval_ms, uint32_t iterations) {
  const bool clear = ::isatty(STDOUT_FILENO) != 0;
  std::map<int, uint64_t> previous_cpu;
  auto previous_at = std::chrono::steady_clock::now();
  for (uint32_t round = 0; iterations == 0 || round < iterations; ++round) {
    if (round > 0) std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));  // the refresh period
    v1::ListSessionsRequest request;
    request.set_all_users(all_users);
    v1::ListSessionsResponse response;
    auto status = call_unary<v1::Exec>(options, &v1::Exec::Stub::ListSessions, request, &response);
    if (!status.ok()) return report_rpc_error(status, options);
    const auto now = std::chrono::steady_clock::now();
    const double wall_usec = std::max(1.0, std::chrono::duration<double, std::micro>(now - previous_at).count());
    std::vector<Row> rows;
    std::map<int, uint64_t> cpu_now;
    for (const auto& s : response.sessions()) {
      if (!s.running()) continue;
      cpu_now[s.session_id()] = cpu_usec(s);
      auto before = previous_cpu.find(s.session_id());
      double used = before == previous_cpu.end() ? 0 : static_cast<double>(cpu_usec(s) - before->second);
      rows.push_back({&s, round == 0 ? 0.0 : 100.0 * used / wall_usec});
    }
    if (clear) std::printf("\x1b[H\x1b[2J");
    print_rows(rows);
    previous_cpu = std::move(cpu_now);
    previous_at = now;
  }
  return 0;
}

}  // namespace codexd::client
