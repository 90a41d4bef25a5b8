// Host patterns of the network allow/deny lists in the config: "example.com" (that host
// exactly), "*.example.com" (every subdomain of example.com, not example.com itself), "*"
// (every host). Hosts and patterns are compared normalized: lowercase, no trailing dot, no
// port, IPv6 without brackets (normalize_network_host, as for network_rule).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace codexd::policy {

struct HostPattern {
  enum class Kind { kExact, kSubdomains, kAny };
  Kind kind = Kind::kExact;
  std::string host;  // kExact: the host; kSubdomains: the parent domain; kAny: empty

  bool matches(std::string_view normalized_host) const;
  // Names one host exactly (not a wildcard): what lets a rule reach a non-public address.
  bool is_exact() const { return kind == Kind::kExact; }
  std::string to_string() const;
};

// InvalidArgument with what is wrong ("`*.` needs a domain after it", "wildcards only as a
// leading `*.`", "... without scheme or path").
Result<HostPattern> parse_host_pattern(std::string_view text);

}  // namespace codexd::policy
