// Persisting an approved command as an allow rule (Codex's append_allow_prefix_rule).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace codexd::policy {

// The line appended for `tokens`: prefix_rule(pattern=["a", "b"], decision="allow").
std::string allow_rule_line(const std::vector<std::string>& tokens);

// Appends allow_rule_line(tokens) + "\n" to `path` under an exclusive flock: creates the
// parent directory (one level) if missing, writes nothing when an identical line exists, and
// inserts a newline first when the file does not end in one. Refuses an empty prefix and the
// banned interpreter prefixes (requirement.h is_banned_prefix).
Status append_allow_prefix_rule(const std::string& path, const std::vector<std::string>& tokens);

// The line for an approved host: network_rule(host="h", protocol="https", decision="allow").
std::string allow_network_rule_line(const std::string& host, const std::string& protocol);

// Appends allow_network_rule_line the same way (flock, no duplicate line). `host` must be a
// normalized network_rule host (normalize_network_host) and `protocol` one of http, https,
// socks5_tcp, socks5_udp: anything else is refused, so the file always loads again.
Status append_allow_network_rule(const std::string& path, const std::string& host, const std::string& protocol);

}  // namespace codexd::policy
