// The three exec-policy decisions, ordered from least to most strict.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace codexd::policy {

enum class Decision { kAllow = 0, kPrompt = 1, kForbidden = 2 };

// "allow" / "prompt" / "forbidden" (exact, case-sensitive), as prefix_rule accepts them.
std::optional<Decision> parse_decision(std::string_view s);
std::string_view decision_name(Decision d);       // "allow"
std::string_view decision_debug_name(Decision d);  // "Allow" (Rust Debug, used in messages)
inline Decision strictest(Decision a, Decision b) { return a > b ? a : b; }

}  // namespace codexd::policy
