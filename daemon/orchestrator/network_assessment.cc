#include "daemon/orchestrator/network_assessment.h"

#include <arpa/inet.h>

#include <vector>

namespace codexd::orchestrator {
namespace {

struct Match {
  NetworkDecision decision;
  std::string reason;
  bool exact;
};

int strictness(NetworkDecision d) {
  switch (d) {
    case NetworkDecision::kAllow: return 0;
    case NetworkDecision::kPrompt: return 1;
    case NetworkDecision::kForbidden: return 2;
  }
  return 2;
}

void match_patterns(const std::vector<policy::HostPattern>& patterns, const std::string& host, NetworkDecision decision,
                    const std::string& source, std::vector<Match>* out) {
  for (const policy::HostPattern& p : patterns) {
    if (!p.matches(host)) continue;
    out->push_back({decision, source + " \"" + p.to_string() + "\"", p.is_exact()});
  }
}

void match_rules(const policy::Policy& policy, const NetworkQuestion& q, std::vector<Match>* out) {
  for (const policy::NetworkRule& rule : policy.network_rules()) {
    if (rule.host != q.host || rule.protocol != q.protocol) continue;
    NetworkDecision d = rule.decision == policy::Decision::kAllow    ? NetworkDecision::kAllow
                        : rule.decision == policy::Decision::kPrompt ? NetworkDecision::kPrompt
                                                                     : NetworkDecision::kForbidden;
    std::string reason = "network_rule(host=\"" + rule.host + "\", protocol=\"" + rule.protocol + "\", decision=\"" +
                         std::string(policy::decision_name(rule.decision)) + "\")";
    if (rule.justification) reason += ": " + *rule.justification;
    out->push_back({d, reason, true});  // network_rule hosts are always exact
  }
}

}  // namespace

bool is_ip_literal(const std::string& host) {
  unsigned char buf[16];
  return ::inet_pton(AF_INET, host.c_str(), buf) == 1 || ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

NetworkAssessment assess_network(const config::Config& config, const policy::Policy& policy,
                                 const NetworkQuestion& q) {
  std::vector<Match> matches;
  match_patterns(config.network.deny, q.host, NetworkDecision::kForbidden, "denied by [network] deny", &matches);
  match_patterns(config.network.allow, q.host, NetworkDecision::kAllow, "allowed by [network] allow", &matches);
  if (auto it = config.agents.find(q.agent_id); it != config.agents.end()) {
    const std::string agent = "[agents.\"" + q.agent_id + "\"] ";
    match_patterns(it->second.network_deny, q.host, NetworkDecision::kForbidden, "denied by " + agent + "network_deny", &matches);
    match_patterns(it->second.network_allow, q.host, NetworkDecision::kAllow, "allowed by " + agent + "network_allow", &matches);
  }
  match_rules(policy, q, &matches);

  NetworkAssessment out;
  // Under "never" nothing reaches a reviewer: a prompt is a refusal.
  const bool never = config.approval_policy_for(q.agent_id).kind == policy::ApprovalPolicyKind::kNever;
  if (matches.empty()) {
    out.unlisted = true;
    out.decision = never ? NetworkDecision::kForbidden : NetworkDecision::kPrompt;
    out.reason = never ? "no rule allows " + q.host + " and the approval policy is never (add it to [network] allow)"
                       : "no rule allows " + q.host;
    return out;
  }
  const Match* strictest = &matches.front();
  for (const Match& m : matches) {
    if (strictness(m.decision) > strictness(strictest->decision)) strictest = &m;
  }
  out.decision = strictest->decision;
  out.reason = strictest->reason;
  if (out.decision == NetworkDecision::kPrompt && never) {
    out.decision = NetworkDecision::kForbidden;
    out.reason += " and the approval policy is never";
  }
  for (const Match& m : matches) out.names_host_exactly |= m.decision == NetworkDecision::kAllow && m.exact;
  return out;
}

}  // namespace codexd::orchestrator
