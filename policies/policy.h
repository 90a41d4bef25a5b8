// An immutable, loaded exec policy: prefix rules indexed by program, host-executable gates
// and network rules. Build one with load_policy (loader.h); share it across threads as
// std::shared_ptr<const Policy>.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "policies/decision.h"
#include "policies/rule.h"

namespace codexd::policy {

struct NetworkRule {
  std::string host;      // normalized: lowercase, no port, no trailing dot
  std::string protocol;  // http, https, socks5_tcp, socks5_udp
  Decision decision = Decision::kAllow;
  std::optional<std::string> justification;
};

struct MatchOptions {
  bool resolve_host_executables = false;
  std::string cwd;   // for relative argv[0] when resolving
  std::string home;  // for "~" when resolving
};

// What `codex execpolicy check` reports: every matching rule in definition order and the
// strictest decision (absent when nothing matched).
struct Evaluation {
  std::vector<RuleMatch> matched_rules;
  std::optional<Decision> decision;
};

class Policy {
 public:
  Policy() = default;
  Policy(std::vector<PrefixRule> rules, std::unordered_map<std::string, std::vector<std::string>> host_executables,
         std::vector<NetworkRule> network_rules);

  Evaluation check(const std::vector<std::string>& argv, const MatchOptions& options) const;
  std::vector<RuleMatch> matches(const std::vector<std::string>& argv, const MatchOptions& options) const;

  size_t rule_count() const { return rules_.size(); }
  const std::vector<PrefixRule>& rules() const { return rules_; }
  const std::vector<NetworkRule>& network_rules() const { return network_rules_; }
  const std::unordered_map<std::string, std::vector<std::string>>& host_executables() const { return host_executables_; }

 private:
  void match_program(const std::string& key, const std::vector<std::string>& argv,
                     const std::optional<std::string>& resolved, std::vector<RuleMatch>& out) const;
  bool gate_allows(const std::string& name, const std::string& path) const;

  std::vector<PrefixRule> rules_;
  std::unordered_map<std::string, std::vector<uint32_t>> by_first_;             // exact first token
  std::unordered_map<std::string, std::vector<uint32_t>> canonical_by_folded_;  // canonical rules only
  std::unordered_map<std::string, std::vector<std::string>> host_executables_;
  std::vector<NetworkRule> network_rules_;
};

}  // namespace codexd::policy
