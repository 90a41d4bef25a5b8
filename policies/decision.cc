#include "policies/decision.h"

namespace codexd::policy {

std::optional<Decision> parse_decision(std::string_view s) {
  if (s == "allow") return Decision::kAllow;
  if (s == "prompt") return Decision::kPrompt;
  if (s == "forbidden") return Decision::kForbidden;
  return std::nullopt;
}

std::string_view decision_name(Decision d) {
  switch (d) {
    case Decision::kAllow: return "allow";
    case Decision::kPrompt: return "prompt";
    case Decision::kForbidden: return "forbidden";
  }
  return "allow";
}

std::string_view decision_debug_name(Decision d) {
  switch (d) {
    case Decision::kAllow: return "Allow";
    case Decision::kPrompt: return "Prompt";
    case Decision::kForbidden: return "Forbidden";
  }
  return "Allow";
}

}  // namespace codexd::policy
