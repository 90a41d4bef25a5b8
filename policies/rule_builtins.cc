#include "policies/rule_builtins.h"

#include <algorithm>
#include <cctype>

#include "policies/path_util.h"
#include "policies/shlex.h"
#include "policies/starlark/args.h"
#include "policies/starlark/evaluator.h"
#include "policies/starlark/value_ops.h"

namespace codexd::policy {
namespace {

using starlark::CallArgs;
using starlark::Evaluator;
using starlark::NativeError;
using starlark::Type;
using starlark::Value;

[[noreturn]] void fail(const std::string& message) { throw NativeError{message}; }

void require_type(const std::optional<Value>& v, const char* param, Type type, const char* expected) {
  if (v && !v->is(type)) starlark::throw_type_mismatch(param, expected, *v);
}

bool is_blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c) != 0; });
}

std::vector<std::string> strings_of_example(const Value& v) {
  if (v.is(Type::kString)) {
    auto words = shlex_split(starlark::str_of(v));
    if (!words) fail("invalid example: example string has invalid shell syntax");
    if (words->empty()) fail("invalid example: example cannot be an empty string");
    return *words;
  }
  if (v.is(Type::kList)) {
    const auto& items = starlark::list_of(v)->items;
    if (items.empty()) fail("invalid example: example cannot be an empty list");
    std::vector<std::string> out;
    for (const Value& item : items) {
      if (!item.is(Type::kString)) fail("invalid example: example tokens must be strings (got " + starlark::type_name(item) + ")");
      out.push_back(starlark::str_of(item));
    }
    return out;
  }
  fail("invalid example: example must be a string or list of strings (got " + starlark::type_name(v) + ")");
}

std::vector<std::vector<std::string>> parse_examples(const std::optional<Value>& v) {
  std::vector<std::vector<std::string>> out;
  if (!v) return out;
  for (const Value& item : starlark::list_of(*v)->items) out.push_back(strings_of_example(item));
  return out;
}

// Pattern elements: a string, or a non-empty list of strings (alternatives).
std::vector<PatternToken> parse_pattern(const Value& pattern) {
  const auto& items = starlark::list_of(pattern)->items;
  if (items.empty()) fail("invalid pattern element: pattern cannot be empty");
  std::vector<PatternToken> out;
  out.reserve(items.size());
  for (const Value& item : items) {
    PatternToken token;
    if (item.is(Type::kString)) {
      token.alternatives.push_back(starlark::str_of(item));
    } else if (item.is(Type::kList)) {
      const auto& alts = starlark::list_of(item)->items;
      if (alts.empty()) fail("invalid pattern element: pattern alternatives cannot be empty");
      token.alternatives.reserve(alts.size());
      for (const Value& alt : alts) {
        if (!alt.is(Type::kString)) {
          fail("invalid pattern element: pattern alternative must be a string (got " + starlark::type_name(alt) + ")");
        }
        token.alternatives.push_back(starlark::str_of(alt));
      }
    } else {
      fail("invalid pattern element: pattern element must be a string or list of strings (got " +
           starlark::type_name(item) + ")");
    }
    out.push_back(std::move(token));
  }
  return out;
}

// The rule builtins take every parameter by position or by name.
constexpr auto kEither = starlark::Pass::kEither;

Value prefix_rule(FileDeclarations* out, const std::string& call_location, CallArgs& args) {
  auto a = starlark::bind_args("prefix_rule", args,
                               {{"pattern", true, kEither}, {"decision", false, kEither}, {"match", false, kEither},
                                {"not_match", false, kEither}, {"justification", false, kEither},
                                {"canonical_matching", false, kEither}});
  require_type(a[0], "pattern", Type::kList, "list");
  require_type(a[1], "decision", Type::kString, "str");
  require_type(a[2], "match", Type::kList, "list");
  require_type(a[3], "not_match", Type::kList, "list");
  require_type(a[4], "justification", Type::kString, "str");
  require_type(a[5], "canonical_matching", Type::kBool, "bool");

  Decision decision = Decision::kAllow;
  if (a[1]) {
    auto parsed = parse_decision(starlark::str_of(*a[1]));
    if (!parsed) fail("invalid decision: " + starlark::str_of(*a[1]));
    decision = *parsed;
  }
  std::optional<std::string> justification;
  if (a[4]) {
    if (is_blank(starlark::str_of(*a[4]))) fail("invalid rule: justification cannot be empty");
    justification = starlark::str_of(*a[4]);
  }
  std::vector<PatternToken> pattern = parse_pattern(*a[0]);
  PrefixRuleCall call;
  call.match_examples = parse_examples(a[2]);
  call.not_match_examples = parse_examples(a[3]);
  call.location = call_location;
  bool canonical = a[5] && a[5]->as_bool();
  // Only the first position expands into one rule per alternative (duplicates kept). The
  // last one takes the pattern itself; the others copy it.
  const size_t alternatives = pattern[0].alternatives.size();
  call.rules.reserve(alternatives);
  for (size_t i = 0; i < alternatives; ++i) {
    const bool last = i + 1 == alternatives;
    PrefixRule rule;
    if (last) {
      rule.first = std::move(pattern[0].alternatives[i]);
      rule.rest.assign(std::make_move_iterator(pattern.begin() + 1), std::make_move_iterator(pattern.end()));
    } else {
      rule.first = pattern[0].alternatives[i];
      rule.rest.assign(pattern.begin() + 1, pattern.end());
    }
    rule.decision = decision;
    rule.justification = justification;
    rule.canonical_matching = canonical;
    rule.source = call.location;
    call.rules.push_back(std::move(rule));
  }
  out->calls.push_back(std::move(call));
  return Value::none();
}

bool is_bare_name(const std::string& name) {
  return name != "." && name != ".." && name.find('/') == std::string::npos;
}

Value host_executable(FileDeclarations* out, CallArgs& args) {
  auto a = starlark::bind_args("host_executable", args, {{"name", true, kEither}, {"paths", true, kEither}});
  require_type(a[0], "name", Type::kString, "str");
  require_type(a[1], "paths", Type::kList, "list");
  const std::string& name = starlark::str_of(*a[0]);
  if (name.empty()) fail("invalid rule: host_executable name cannot be empty");
  if (!is_bare_name(name)) fail("invalid rule: host_executable name must be a bare executable name (got " + name + ")");
  std::vector<std::string> paths;
  for (const Value& p : starlark::list_of(*a[1])->items) {
    if (!p.is(Type::kString)) fail("invalid rule: host_executable paths must be strings (got " + starlark::type_name(p) + ")");
    const std::string& raw = starlark::str_of(p);
    if (raw.empty() || raw[0] != '/') fail("invalid rule: host_executable paths must be absolute (got " + raw + ")");
    std::string normalized = normalize_lexically(raw);
    auto base = path_basename(normalized);
    if (!base || *base != name) {
      fail("invalid rule: host_executable path `" + raw + "` must have basename `" + name + "`");
    }
    if (std::find(paths.begin(), paths.end(), normalized) == paths.end()) paths.push_back(normalized);
  }
  out->host_executables.emplace_back(name, std::move(paths));
  return Value::none();
}

Value network_rule(FileDeclarations* out, CallArgs& args) {
  auto a = starlark::bind_args("network_rule", args, {{"host", true, kEither}, {"protocol", true, kEither}, {"decision", true, kEither},
                                                      {"justification", false, kEither}});
  require_type(a[0], "host", Type::kString, "str");
  require_type(a[1], "protocol", Type::kString, "str");
  require_type(a[2], "decision", Type::kString, "str");
  require_type(a[3], "justification", Type::kString, "str");
  NetworkRule rule;
  std::string protocol = starlark::str_of(*a[1]);
  if (protocol == "https_connect" || protocol == "http-connect") protocol = "https";
  if (protocol != "http" && protocol != "https" && protocol != "socks5_tcp" && protocol != "socks5_udp") {
    fail("invalid rule: network_rule protocol must be one of http, https, socks5_tcp, socks5_udp (got " +
         starlark::str_of(*a[1]) + ")");
  }
  rule.protocol = protocol;
  const std::string& decision = starlark::str_of(*a[2]);
  if (decision == "deny") {
    rule.decision = Decision::kForbidden;
  } else if (auto d = parse_decision(decision)) {
    rule.decision = *d;
  } else {
    fail("invalid decision: " + decision);
  }
  if (a[3]) {
    if (is_blank(starlark::str_of(*a[3]))) fail("invalid rule: justification cannot be empty");
    rule.justification = starlark::str_of(*a[3]);
  }
  std::string error;
  if (!normalize_network_host(starlark::str_of(*a[0]), &rule.host, &error)) fail("invalid rule: " + error);
  out->network_rules.push_back(std::move(rule));
  return Value::none();
}

}  // namespace

bool normalize_network_host(const std::string& raw, std::string* host, std::string* error) {
  size_t b = 0, e = raw.size();
  while (b < e && std::isspace(static_cast<unsigned char>(raw[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(raw[e - 1]))) --e;
  std::string h = raw.substr(b, e - b);
  if (h.empty()) {
    *error = "network_rule host cannot be empty";
    return false;
  }
  if (h.find("://") != std::string::npos || h.find_first_of("/?#") != std::string::npos) {
    *error = "network_rule host must be a hostname or IP literal (without scheme or path)";
    return false;
  }
  if (h[0] == '[') {
    size_t close = h.find(']');
    if (close == std::string::npos) {
      *error = "network_rule host has an invalid bracketed IPv6 literal";
      return false;
    }
    std::string rest = h.substr(close + 1);
    bool port_ok = rest.empty() || (rest.size() > 1 && rest[0] == ':' &&
                                    std::all_of(rest.begin() + 1, rest.end(), [](unsigned char c) { return std::isdigit(c); }));
    if (!port_ok || close == 1) {
      *error = "network_rule host has an invalid bracketed IPv6 literal";
      return false;
    }
    h = h.substr(1, close - 1);
  } else if (std::count(h.begin(), h.end(), ':') == 1) {
    size_t colon = h.find(':');
    std::string port = h.substr(colon + 1);
    if (port.empty() || !std::all_of(port.begin(), port.end(), [](unsigned char c) { return std::isdigit(c); })) {
      *error = "network_rule host contains an unsupported suffix: " + raw;
      return false;
    }
    h = h.substr(0, colon);
  }
  while (!h.empty() && h.back() == '.') h.pop_back();
  for (char& c : h) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (h.empty()) {
    *error = "network_rule host cannot be empty";
    return false;
  }
  if (h.find('*') != std::string::npos) {
    *error = "network_rule host must be a specific host; wildcards are not allowed";
    return false;
  }
  if (std::any_of(h.begin(), h.end(), [](unsigned char c) { return std::isspace(c); })) {
    *error = "network_rule host cannot contain whitespace";
    return false;
  }
  *host = std::move(h);
  return true;
}

std::vector<starlark::Builtin> make_rule_builtins(FileDeclarations* out) {
  return {
      {"prefix_rule", [out](Evaluator& ev, CallArgs& args) { return prefix_rule(out, ev.current_call_location(), args); }},
      {"host_executable", [out](Evaluator&, CallArgs& args) { return host_executable(out, args); }},
      {"network_rule", [out](Evaluator&, CallArgs& args) { return network_rule(out, args); }},
  };
}

}  // namespace codexd::policy

namespace codexd::policy {

bool call_rule_builtin(std::string_view name, const std::string& call_location, starlark::CallArgs& args,
                       FileDeclarations* out) {
  if (name == "prefix_rule") {
    prefix_rule(out, call_location, args);
  } else if (name == "host_executable") {
    host_executable(out, args);
  } else if (name == "network_rule") {
    network_rule(out, args);
  } else {
    return false;
  }
  return true;
}

}  // namespace codexd::policy
