// The optional Prometheus endpoint ([metrics] listen): GET /metrics in the text exposition
// format over HTTP/1.1 (Boost.Beast), on a Unix socket (mode 0600) or a loopback TCP port. It
// runs on a thread and io_context of its own, so a scrape (or a client that connects and
// stalls) never occupies the core thread or a gRPC thread. The figures are gathered by
// `gather`, which answers asynchronously (the daemon posts to its core thread and calls back).
// Bounded: 16 connections at once, 8 KiB of request headers, 10 s per request.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "daemon/config/config.h"

namespace codexd::server {

class MetricsEndpoint {
 public:
  // Calls `reply` exactly once with the exposition text, from any thread.
  using Gather = std::function<void(std::function<void(std::string)> reply)>;

  static Result<std::unique_ptr<MetricsEndpoint>> start(const config::MetricsAddress& address, Gather gather);
  ~MetricsEndpoint();  // stops serving and joins the thread; a Unix socket file is removed

  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // "unix:/path" or "tcp:127.0.0.1:PORT", for the log.
  const std::string& description() const;

  struct Impl;

 private:
  explicit MetricsEndpoint(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace codexd::server
