// What a scrape of the metrics endpoint says, from the daemon's parts. Runs on the core
// thread (the engine, broker and runner are that thread's); the proxy counters and the policy
// state are thread-safe. Names and meanings: docs/metrics.md.
#pragma once

#include <chrono>
#include <string>

#include "daemon/exec/exec_engine.h"
#include "daemon/orchestrator/approval_broker.h"
#include "daemon/orchestrator/command_runner.h"
#include "daemon/orchestrator/exec_supervisor.h"
#include "daemon/orchestrator/policy_store.h"
#include "daemon/server/guarded_relay.h"
#include "daemon/server/network_plane.h"
#include "daemon/server/server_context.h"
#include "platform/limits/limits.h"

namespace codexd::server {

struct MetricsSources {
  std::string version;
  std::string mode;  // "user" | "system"
  std::chrono::steady_clock::time_point started_at;
  const exec::ExecEngine* engine = nullptr;
  const orchestrator::ApprovalBroker* broker = nullptr;
  const orchestrator::CommandRunner* runner = nullptr;
  const orchestrator::PolicyStore* policies = nullptr;
  const NetworkPlane* network = nullptr;        // null: no proxy
  const limits::LimitsManager* limits = nullptr;  // null: none
  const GuardedRelays* relays = nullptr;          // client connections; thread-safe counters
  const orchestrator::ExecSupervisor* supervisor = nullptr;  // nested execs; null: none
  const LiveStreams* streams = nullptr;                      // streaming calls; atomics
};

// The exposition text. Core thread only.
std::string metrics_report(const MetricsSources& sources);

}  // namespace codexd::server
