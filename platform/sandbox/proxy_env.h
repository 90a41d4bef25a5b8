// The environment that points a command's tools at the proxy ports of its sandbox
// (network mode "proxy"). One list for every backend: the Linux planner adds it to the plan
// (bwrap: fixed ports inside the sandbox's own network namespace), the Landlock helper sets
// it at run time (ephemeral ports on the host's loopback). docs/sandbox.md lists it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace codexd::sandbox {

struct ProxyPorts {
  uint16_t http = 0;   // HTTP proxy (plain http:// forwarding and CONNECT)
  uint16_t socks = 0;  // SOCKS5 (CONNECT with host names)
};

// Inside a sandbox with its own network namespace nothing else can hold these ports.
inline constexpr ProxyPorts kNamespaceProxyPorts{3128, 1080};

// NAME=VALUE entries: HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY in both cases, and the
// variables of npm, yarn, pip and cargo that do not read those.
std::vector<std::string> proxy_environment(ProxyPorts ports);

// `env` with every variable proxy_environment sets removed and proxy_environment(ports)
// appended: the command cannot keep a proxy setting of its own that bypasses the sandbox's.
std::vector<std::string> with_proxy_environment(std::vector<std::string> env, ProxyPorts ports);

}  // namespace codexd::sandbox
