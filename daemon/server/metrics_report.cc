#include "daemon/server/metrics_report.h"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "daemon/server/memory_trim.h"
#include "daemon/server/prometheus_text.h"

namespace codexd::server {
namespace {

struct ProcessFigures {
  double resident_bytes = 0;
  double threads = 0;
  double open_fds = 0;
};

// The daemon process itself, from /proc/self (what an operator watches for leaks).
ProcessFigures process_figures() {
  ProcessFigures figures;
  figures.resident_bytes = static_cast<double>(resident_bytes());
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    std::istringstream fields(line);
    std::string key;
    double value = 0;
    fields >> key >> value;
    if (key == "Threads:") figures.threads = value;
  }
  if (DIR* fds = ::opendir("/proc/self/fd")) {
    while (const dirent* entry = ::readdir(fds)) {
      if (entry->d_name[0] != '.') ++figures.open_fds;
    }
    ::closedir(fds);
    --figures.open_fds;  // the directory's own descriptor
  }
  return figures;
}

void daemon_families(PrometheusText& out, const MetricsSources& s) {
  out.single("codexd_build_info", "gauge", "Always 1; the daemon's version and mode as labels.", 1,
             {{"version", s.version}, {"mode", s.mode}});
  out.single("codexd_uptime_seconds", "gauge", "Seconds since this daemon started.",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - s.started_at).count());
  const ProcessFigures p = process_figures();
  out.single("codexd_process_resident_memory_bytes", "gauge", "Resident memory of the daemon process.",
             p.resident_bytes);
  out.single("codexd_process_open_fds", "gauge", "Open file descriptors of the daemon process.", p.open_fds);
  out.single("codexd_process_threads", "gauge", "Threads of the daemon process.", p.threads);
}

void session_families(PrometheusText& out, const exec::ExecEngine& engine) {
  out.single("codexd_sessions_live", "gauge",
             "Sessions in the process store (running, or finished and not yet reported).",
             static_cast<double>(engine.live_sessions()));
  out.single("codexd_sessions_started_total", "counter", "Sessions started by this daemon.",
             static_cast<double>(engine.total_sessions()));
  out.single("codexd_session_output_bytes_total", "counter", "Output bytes the sessions produced.",
             static_cast<double>(engine.total_output_bytes()));
}

void call_families(PrometheusText& out, const orchestrator::CallMetrics& calls) {
  out.family("codexd_commands_total", "counter",
             "Finished ExecCommand and RunCommand calls by audit decision and outcome (docs/approvals.md).");
  for (const auto& [key, count] : calls.calls) {
    out.sample("codexd_commands_total", static_cast<double>(count), {{"decision", key.first}, {"outcome", key.second}});
  }
  out.family("codexd_command_launch_seconds", "histogram",
             "Time to start a command's process once its plan was ready, by sandbox backend.");
  for (const auto& [backend, histogram] : calls.launch_seconds) {
    out.histogram("codexd_command_launch_seconds", histogram, {{"sandbox", backend}});
  }
  out.family("codexd_approval_wait_seconds", "histogram", "Time calls waited for reviewers (calls that waited).");
  out.histogram("codexd_approval_wait_seconds", calls.approval_wait_seconds);
}

void approval_families(PrometheusText& out, const orchestrator::ApprovalBroker& broker) {
  out.single("codexd_approvals_pending", "gauge", "Approval requests waiting for a reviewer.",
             static_cast<double>(broker.pending_count()));
  out.family("codexd_approvals_resolved_total", "counter", "Approval requests that ended, by how and the decision.");
  for (const auto& [key, count] : broker.resolved_counts()) {
    out.sample("codexd_approvals_resolved_total", static_cast<double>(count),
               {{"source", key.first}, {"decision", key.second}});
  }
}

void policy_families(PrometheusText& out, const orchestrator::PolicyStore& policies) {
  const orchestrator::PolicyState state = policies.state();
  out.single("codexd_policy_rules", "gauge", "Rules in the policy in force.", static_cast<double>(state.rule_count));
  out.single("codexd_policy_last_reload_failed", "gauge",
             "1 when the last reload failed (the previous policy is in force).", state.last_error.empty() ? 0 : 1);
  out.single("codexd_policy_warnings", "gauge", "Warnings about the policy in force (codexctl status lists them).",
             static_cast<double>(state.warnings.size()));
}

void proxy_families(PrometheusText& out, const NetworkPlane& network) {
  const network::ProxyCounters c = network.counters();
  out.single("codexd_proxy_connections_active", "gauge", "Connections open through the network proxy.",
             static_cast<double>(c.active_connections));
  out.family("codexd_proxy_connections_total", "counter", "Connections through the network proxy by decision.");
  out.sample("codexd_proxy_connections_total", static_cast<double>(c.total_allowed), {{"decision", "allowed"}});
  out.sample("codexd_proxy_connections_total", static_cast<double>(c.total_denied), {{"decision", "denied"}});
  out.family("codexd_proxy_bytes_total", "counter", "Bytes relayed by the network proxy.");
  out.sample("codexd_proxy_bytes_total", static_cast<double>(c.bytes_up), {{"direction", "up"}});
  out.sample("codexd_proxy_bytes_total", static_cast<double>(c.bytes_down), {{"direction", "down"}});
}

}  // namespace

std::string metrics_report(const MetricsSources& s) {
  PrometheusText out;
  daemon_families(out, s);
  if (s.engine) session_families(out, *s.engine);
  if (s.runner) call_families(out, s.runner->metrics());
  if (s.broker) approval_families(out, *s.broker);
  if (s.policies) policy_families(out, *s.policies);
  if (s.network) proxy_families(out, *s.network);
  if (s.relays) {
    out.single("codexd_client_connections", "gauge", "Client connections to the daemon's socket, past the preface gate.",
               static_cast<double>(s.relays->live()));
    out.single("codexd_client_connections_refused_total", "counter",
               "Client connections closed for their HTTP/2 frames (an oversized header block, a forbidden frame sequence).",
               static_cast<double>(s.relays->refused()));
  }
  if (s.supervisor) {
    const auto& counts = s.supervisor->counts();
    out.single("codexd_nested_execs_total", "counter",
               "Programs started inside supervised sandboxes (not their commands), decided by the rules.",
               static_cast<double>(counts.execs));
    out.single("codexd_nested_execs_refused_total", "counter",
               "Nested execs refused (a forbidden rule, a denied or unanswered approval, unreadable arguments).",
               static_cast<double>(counts.refused));
    out.single("codexd_nested_execs_asked_total", "counter", "Nested execs that asked a reviewer.",
               static_cast<double>(counts.asked));
  }
  if (s.streams) {
    out.family("codexd_streams_live", "gauge", "Streaming calls in progress (Attach, WatchApprovals).");
    out.sample("codexd_streams_live", static_cast<double>(s.streams->attach.load()), {{"method", "Attach"}});
    out.sample("codexd_streams_live", static_cast<double>(s.streams->approval_watch.load()),
               {{"method", "WatchApprovals"}});
  }
  if (s.limits) {
    out.single("codexd_limits_info", "gauge", "Always 1; the resource-limits mechanism as a label.", 1,
               {{"mechanism", limits::mechanism_name(s.limits->status().mechanism)}});
  }
  return out.text();
}

}  // namespace codexd::server
