// The network plane: codexd's filtering proxy on a thread of its own (a 1 GiB download or a
// slow client never delays sessions or approvals on the core thread), the decider that
// answers it from the core thread, and the sink that turns each sandbox's proxy channel
// into a proxy attachment. Owned by the composition root.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <optional>
#include <thread>

#include "daemon/config/config.h"
#include "daemon/network/proxy_service.h"
#include "daemon/orchestrator/audit_log.h"
#include "daemon/orchestrator/network_decider.h"
#include "daemon/server/proxy_channels.h"

namespace codexd::server {

class NetworkPlane {
 public:
  // `decider_deps.core` is the core thread's io_context; `audit` must outlive the plane.
  NetworkPlane(orchestrator::NetworkDeciderDeps decider_deps, orchestrator::AuditLog* audit);
  ~NetworkPlane();
  NetworkPlane(const NetworkPlane&) = delete;
  NetworkPlane& operator=(const NetworkPlane&) = delete;

  // Where launches in network mode proxy hand their channel.
  std::shared_ptr<ProxyChannels> channels() const { return channels_; }
  network::ProxyCounters counters() const { return proxy_->counters(); }

  void start();
  void stop();  // after every session is gone; idempotent

 private:
  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::thread thread_;
  std::shared_ptr<orchestrator::NetworkDecider> decider_;
  std::unique_ptr<network::ProxyService> proxy_;
  std::shared_ptr<ProxyChannels> channels_;
};

}  // namespace codexd::server
