#include "policies/host_pattern.h"

#include "policies/rule_builtins.h"

namespace codexd::policy {

bool HostPattern::matches(std::string_view normalized_host) const {
  switch (kind) {
    case Kind::kAny: return true;
    case Kind::kExact: return normalized_host == host;
    case Kind::kSubdomains:
      return normalized_host.size() > host.size() + 1 &&
             normalized_host.substr(normalized_host.size() - host.size()) == host &&
             normalized_host[normalized_host.size() - host.size() - 1] == '.';
  }
  return false;
}

std::string HostPattern::to_string() const {
  switch (kind) {
    case Kind::kAny: return "*";
    case Kind::kExact: return host;
    case Kind::kSubdomains: return "*." + host;
  }
  return host;
}

Result<HostPattern> parse_host_pattern(std::string_view text) {
  HostPattern pattern;
  if (text == "*") {
    pattern.kind = HostPattern::Kind::kAny;
    return pattern;
  }
  std::string rest(text);
  if (rest.rfind("*.", 0) == 0) {
    pattern.kind = HostPattern::Kind::kSubdomains;
    rest = rest.substr(2);
    if (rest.empty()) return InvalidArgument("`*.` needs a domain after it");
  }
  if (rest.find('*') != std::string::npos) {
    return InvalidArgument("\"" + std::string(text) + "\": a wildcard may only be a leading `*.` or the whole pattern `*`");
  }
  std::string error;
  if (!normalize_network_host(rest, &pattern.host, &error)) {
    // The shared normalizer speaks of network_rule; here it is a host pattern.
    const std::string prefix = "network_rule host";
    if (error.rfind(prefix, 0) == 0) error = "host" + error.substr(prefix.size());
    return InvalidArgument("\"" + std::string(text) + "\": " + error);
  }
  return pattern;
}

}  // namespace codexd::policy
