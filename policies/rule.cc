#include "policies/rule.h"

#include <cstdio>

namespace codexd::policy {

std::optional<RuleMatch> match_rule(const PrefixRule& rule, const std::vector<std::string>& argv,
                                    const std::vector<std::string>* folded_argv) {
  if (argv.size() < rule.length()) return std::nullopt;
  if (rule.canonical_matching) {
    if (!folded_argv || (*folded_argv)[0] != rule.folded_first) return std::nullopt;
    for (size_t i = 0; i < rule.rest.size(); ++i) {
      const std::string& token = (*folded_argv)[i + 1];
      bool any = false;
      for (const std::string& alt : rule.folded_rest[i]) {
        if (alt == token) {
          any = true;
          break;
        }
      }
      if (!any) return std::nullopt;
    }
  } else {
    if (argv[0] != rule.first) return std::nullopt;
    for (size_t i = 0; i < rule.rest.size(); ++i) {
      bool any = false;
      for (const std::string& alt : rule.rest[i].alternatives) {
        if (alt == argv[i + 1]) {
          any = true;
          break;
        }
      }
      if (!any) return std::nullopt;
    }
  }
  RuleMatch m;
  m.matched_prefix = std::vector<std::string>(argv.begin(), argv.begin() + static_cast<std::ptrdiff_t>(rule.length()));
  m.decision = rule.decision;
  m.justification = rule.justification;
  m.source = rule.source;
  return m;
}

// Rust's str Debug: quotes, escapes \t \r \n \\ \" \', \0, and other control characters as \u{..}.
std::string rust_debug_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\0': out += "\\0"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char buf[16];
          std::snprintf(buf, sizeof buf, "\\u{%x}", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

namespace {
std::string debug_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += rust_debug_string(items[i]);
  }
  return out + "]";
}

std::string debug_option(const std::optional<std::string>& v, const char* wrapper = nullptr) {
  if (!v) return "None";
  if (wrapper) return std::string("Some(") + wrapper + "(" + rust_debug_string(*v) + "))";
  return "Some(" + rust_debug_string(*v) + ")";
}
}  // namespace

std::string rule_debug(const PrefixRule& rule) {
  std::string rest = "[";
  for (size_t i = 0; i < rule.rest.size(); ++i) {
    if (i) rest += ", ";
    const auto& alts = rule.rest[i].alternatives;
    rest += alts.size() == 1 ? "Single(" + rust_debug_string(alts[0]) + ")" : "Alts(" + debug_list(alts) + ")";
  }
  rest += "]";
  return std::string("PrefixRule { pattern: PrefixPattern { canonical_matching: ") +
         (rule.canonical_matching ? "true" : "false") + ", first: " + rust_debug_string(rule.first) + ", rest: " + rest +
         " }, decision: " + std::string(decision_debug_name(rule.decision)) +
         ", justification: " + debug_option(rule.justification) + " }";
}

std::string match_debug(const RuleMatch& m) {
  return "PrefixRuleMatch { matched_prefix: " + debug_list(m.matched_prefix) +
         ", decision: " + std::string(decision_debug_name(m.decision)) +
         ", resolved_program: " + debug_option(m.resolved_program, "AbsolutePathBuf") +
         ", justification: " + debug_option(m.justification) + " }";
}

}  // namespace codexd::policy
