// The policy builtins of a rules file: prefix_rule, host_executable and network_rule, with
// Codex's argument validation and messages. They record what one file declares.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "policies/policy.h"
#include "policies/starlark/module.h"

namespace codexd::policy {

// One prefix_rule call: its rules (first-position alternatives expanded) and its examples,
// checked only after the whole file evaluated.
struct PrefixRuleCall {
  std::vector<PrefixRule> rules;
  std::vector<std::vector<std::string>> match_examples;
  std::vector<std::vector<std::string>> not_match_examples;
  std::string location;  // file:line:col of the call
};

struct FileDeclarations {
  std::vector<PrefixRuleCall> calls;
  std::vector<std::pair<std::string, std::vector<std::string>>> host_executables;  // call order
  std::vector<NetworkRule> network_rules;
};

// Builtins that append to *out. `out` must outlive the evaluation.
std::vector<starlark::Builtin> make_rule_builtins(FileDeclarations* out);

// Calls the policy builtin `name` outside an evaluation (the literal-rules fast path, which
// has no Evaluator): the same validation and records as a call from a rules file. Returns
// false when `name` is not a policy builtin; throws starlark::NativeError as the builtin does.
bool call_rule_builtin(std::string_view name, const std::string& call_location, starlark::CallArgs& args,
                       FileDeclarations* out);

// Exposed for tests: network_rule host normalization ("invalid rule: ..." errors as nullopt + message).
bool normalize_network_host(const std::string& raw, std::string* host, std::string* error);

}  // namespace codexd::policy
