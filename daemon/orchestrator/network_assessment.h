// Which hosts a sandboxed command may reach through the proxy: the pure part of the network
// decision. Strictest wins across [network] allow/deny, the agent's network_allow/network_deny
// and the network_rule()s of the loaded policy; a host nothing names follows the approval
// policy (prompt, or forbidden under "never"; a prompt rule is forbidden under "never" too).
#pragma once

#include <cstdint>
#include <string>

#include "daemon/config/config.h"
#include "policies/policy.h"

namespace codexd::orchestrator {

struct NetworkQuestion {
  std::string agent_id;
  std::string host;      // normalized: lowercase, no trailing dot, IPv6 without brackets
  uint16_t port = 0;
  std::string protocol;  // network_rule spelling: http | https | socks5_tcp
};

enum class NetworkDecision { kAllow, kPrompt, kForbidden };

struct NetworkAssessment {
  NetworkDecision decision = NetworkDecision::kForbidden;
  std::string reason;               // which source decided, for the 403 body, the audit log and reviewers
  bool names_host_exactly = false;  // an allow that names this host or IP (no wildcard)
  bool unlisted = false;            // nothing named the host: the approval policy decided
};

NetworkAssessment assess_network(const config::Config& config, const policy::Policy& policy,
                                 const NetworkQuestion& question);

// An IPv4 or IPv6 literal (a reviewer who approves one has seen the exact address).
bool is_ip_literal(const std::string& host);

}  // namespace codexd::orchestrator
