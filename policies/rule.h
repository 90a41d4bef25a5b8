// Prefix rules and rule matches, as Codex's execpolicy models them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/shared_argv.h"
#include "policies/decision.h"

namespace codexd::policy {

// One position after the first token: a single literal or a set of alternatives.
struct PatternToken {
  std::vector<std::string> alternatives;  // size 1: a plain token
};

struct PrefixRule {
  std::string first;                 // the program token (first-position alternatives expand to rules)
  std::vector<PatternToken> rest;
  Decision decision = Decision::kAllow;
  std::optional<std::string> justification;
  bool canonical_matching = false;   // Unicode canonical caseless comparison of every token
  // Folded forms, precomputed when canonical_matching is set.
  std::string folded_first;
  std::vector<std::vector<std::string>> folded_rest;
  std::string source;                // "file:line:col" of the prefix_rule call, for reviewers

  size_t length() const { return rest.size() + 1; }
};

struct RuleMatch {
  // The words a rule matched (its length); for a heuristic match the whole segment, shared with
  // the segment's own argv rather than copied.
  SharedArgv matched_prefix;
  Decision decision = Decision::kAllow;
  std::optional<std::string> resolved_program;
  std::optional<std::string> justification;
  bool heuristic = false;            // produced by the unmatched-command heuristics, not a rule
  std::string source;                // rule location (empty for heuristics)
};

// Tries `rule` against argv (argv[0] already replaced by the basename when resolving).
// Returns the match without resolved_program.
std::optional<RuleMatch> match_rule(const PrefixRule& rule, const std::vector<std::string>& argv,
                                    const std::vector<std::string>* folded_argv);

// Rust Debug renderings used verbatim in Codex's example-validation messages.
std::string rule_debug(const PrefixRule& rule);
std::string match_debug(const RuleMatch& match);
std::string rust_debug_string(const std::string& s);

}  // namespace codexd::policy
