// Network mode proxy, inside the sandbox: open the proxy ports and hand them to the daemon.
#pragma once

#include "base/status.h"
#include "platform/linux/helper_config.h"
#include "platform/sandbox/proxy_env.h"

namespace codexd::sandbox::linux_backend {

// Opens an HTTP and a SOCKS5 listening socket on 127.0.0.1 (kNamespaceProxyPorts inside
// bwrap's own network namespace; ephemeral ports on the host's loopback for Landlock), sends
// both over config.proxy_fd in one message ("codexd-proxy/1 http=P socks=Q", descriptors in
// that order), then closes them and the channel: from here on only the daemon accepts on
// them, so the command can neither take the ports over nor reach the channel.
Result<ProxyPorts> hand_over_proxy_ports(const HelperConfig& config);

}  // namespace codexd::sandbox::linux_backend
