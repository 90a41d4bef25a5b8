#include "policies/policy.h"

#include <algorithm>

#include "policies/path_util.h"
#include "policies/unicode_fold.h"

namespace codexd::policy {

Policy::Policy(std::vector<PrefixRule> rules, std::unordered_map<std::string, std::vector<std::string>> host_executables,
               std::vector<NetworkRule> network_rules)
    : rules_(std::move(rules)), host_executables_(std::move(host_executables)), network_rules_(std::move(network_rules)) {
  by_first_.reserve(rules_.size());
  for (uint32_t i = 0; i < rules_.size(); ++i) {
    PrefixRule& r = rules_[i];
    by_first_[r.first].push_back(i);
    if (r.canonical_matching) {
      r.folded_first = canonical_caseless(r.first);
      r.folded_rest.clear();
      for (const PatternToken& t : r.rest) {
        std::vector<std::string> folded;
        for (const std::string& alt : t.alternatives) folded.push_back(canonical_caseless(alt));
        r.folded_rest.push_back(std::move(folded));
      }
      canonical_by_folded_[r.folded_first].push_back(i);
    }
  }
}

bool Policy::gate_allows(const std::string& name, const std::string& path) const {
  auto it = host_executables_.find(name);
  if (it == host_executables_.end()) return true;
  return std::find(it->second.begin(), it->second.end(), path) != it->second.end();
}

// Two passes, as Codex does: rules filed under the exact program token (canonical or not),
// then canonical rules whose folded program equals the folded token.
void Policy::match_program(const std::string& key, const std::vector<std::string>& argv,
                           const std::optional<std::string>& resolved, std::vector<RuleMatch>& out) const {
  std::vector<std::string> folded_argv;
  auto folded = [&]() -> const std::vector<std::string>* {
    if (folded_argv.empty()) {
      for (const std::string& t : argv) folded_argv.push_back(canonical_caseless(t));
    }
    return &folded_argv;
  };
  std::vector<uint32_t> seen;
  if (auto it = by_first_.find(key); it != by_first_.end()) {
    for (uint32_t i : it->second) {
      const PrefixRule& r = rules_[i];
      auto m = match_rule(r, argv, r.canonical_matching ? folded() : nullptr);
      if (r.canonical_matching) seen.push_back(i);
      if (!m) continue;
      m->resolved_program = resolved;
      out.push_back(std::move(*m));
    }
  }
  if (canonical_by_folded_.empty()) return;
  auto it = canonical_by_folded_.find(canonical_caseless(key));
  if (it == canonical_by_folded_.end()) return;
  for (uint32_t i : it->second) {
    if (std::find(seen.begin(), seen.end(), i) != seen.end()) continue;
    const PrefixRule& r = rules_[i];
    // Reached through a different spelling: the rule's own host gate must allow the path too.
    if (resolved && !gate_allows(r.first, *resolved)) continue;
    auto m = match_rule(r, argv, folded());
    if (!m) continue;
    m->resolved_program = resolved;
    out.push_back(std::move(*m));
  }
}

std::vector<RuleMatch> Policy::matches(const std::vector<std::string>& argv, const MatchOptions& options) const {
  std::vector<RuleMatch> out;
  if (argv.empty()) return out;
  match_program(argv[0], argv, std::nullopt, out);
  if (!out.empty() || !options.resolve_host_executables) return out;
  std::string path = resolve_program_path(argv[0], options.cwd, options.home);
  std::optional<std::string> base = path_basename(path);
  if (!base || !gate_allows(*base, path)) return out;
  std::vector<std::string> renamed = argv;
  renamed[0] = *base;
  match_program(*base, renamed, path, out);
  return out;
}

Evaluation Policy::check(const std::vector<std::string>& argv, const MatchOptions& options) const {
  Evaluation e;
  e.matched_rules = matches(argv, options);
  for (const RuleMatch& m : e.matched_rules) e.decision = e.decision ? strictest(*e.decision, m.decision) : m.decision;
  return e;
}

}  // namespace codexd::policy
