// Inside the sandbox, before the command: open the proxy ports (network mode proxy) and hand
// them and the exec listener (exec supervision) to the daemon.
#pragma once

#include "base/status.h"
#include "base/unique_fd.h"
#include "platform/linux/helper_config.h"
#include "platform/sandbox/proxy_env.h"

namespace codexd::sandbox::linux_backend {

// The two listening sockets, until they are handed to the daemon.
struct OpenedProxyPorts {
  ProxyPorts ports;
  UniqueFd http;
  UniqueFd socks;
};

// Opens an HTTP and a SOCKS5 listening socket on 127.0.0.1 (kNamespaceProxyPorts inside
// bwrap's own network namespace; ephemeral ports on the host's loopback for Landlock).
Result<OpenedProxyPorts> open_proxy_ports(const HelperConfig& config);

// Sends the sandbox's one handover message (platform/sandbox/sandbox_handover.h) over
// config.channel_fd: the proxy's sockets (when `ports`), then the daemon's end of the keeper's
// exec relay (when valid), and closes them and the channel: from here on only the daemon
// accepts on the ports and decides the execs, so the command can neither take them over nor
// reach the channel.
Status hand_over(const HelperConfig& config, OpenedProxyPorts* ports, UniqueFd exec_relay);

}  // namespace codexd::sandbox::linux_backend
