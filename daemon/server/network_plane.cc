#include "daemon/server/network_plane.h"

#include <spdlog/spdlog.h>

#include "daemon/server/io_thread.h"
#include "daemon/server/proxy_channels.h"

namespace codexd::server {
namespace {

orchestrator::NetworkAuditRecord audit_record(const network::ConnectionRecord& r) {
  orchestrator::NetworkAuditRecord out;
  out.agent_id = r.origin.agent_id;
  out.uid = r.origin.uid;
  out.session_id = static_cast<int>(r.origin.session_id);
  out.host = r.target.host;
  out.port = r.target.port;
  out.protocol = std::string(network::to_string(r.target.protocol));
  out.allowed = r.allowed;
  out.reason = r.reason;
  out.address = r.address;
  out.bytes_up = r.bytes_up;
  out.bytes_down = r.bytes_down;
  out.duration_ms = r.duration_ms;
  out.error = r.error;
  return out;
}

// [network]'s engine keys; the rest of ProxyOptions keeps the engine's defaults.
network::ProxyOptions proxy_options(const config::NetworkSection& n) {
  network::ProxyOptions o;
  o.connect_timeout_ms = static_cast<int>(n.connect_timeout_ms);
  o.header_timeout_ms = static_cast<int>(n.header_timeout_ms);
  o.idle_timeout_ms = static_cast<int>(n.idle_timeout_ms);
  o.max_header_bytes = n.max_header_bytes;
  o.max_connections_per_origin = n.max_connections_per_command;
  o.max_connections_total = n.max_connections_total;
  return o;
}

}  // namespace

NetworkPlane::NetworkPlane(orchestrator::NetworkDeciderDeps decider_deps, orchestrator::AuditLog* audit)
    : decider_(std::make_shared<orchestrator::NetworkDecider>(decider_deps)) {
  proxy_ = std::make_unique<network::ProxyService>(io_, proxy_options(decider_deps.config->network), decider_,
                                                   [audit](const network::ConnectionRecord& record) {
                                                     spdlog::debug("proxy: {} {}:{} {} ({})", record.origin.agent_id,
                                                                   record.target.host, record.target.port,
                                                                   record.allowed ? "allowed" : "denied", record.reason);
                                                     if (audit) audit->record(audit_record(record));
                                                   });
  channels_ = make_proxy_channels(io_, *proxy_);
}

NetworkPlane::~NetworkPlane() { stop(); }

void NetworkPlane::start() {
  work_.emplace(io_.get_executor());
  thread_ = std::thread([this] { run_until_stopped(io_, "network"); });
}

void NetworkPlane::stop() {
  work_.reset();
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace codexd::server
