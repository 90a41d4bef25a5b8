// The one message a sandbox sends the daemon before its command starts, over the channel of
// LaunchPlan::channel_fd (a SOCK_SEQPACKET socket, descriptors with SCM_RIGHTS). One message
// for everything, so whoever keeps it for the next daemon (a durable session's shim) keeps it
// whole without understanding it:
//
//   codexd-sandbox/1[ http=P socks=Q][ exec-relay]
//
// descriptors in that order: the listening HTTP and SOCKS5 proxy sockets (network mode proxy),
// then the exec relay of exec supervision (the keeper's socket, platform/sandbox/exec_relay.h).
// Before the relay a sandbox handed over its seccomp listener itself ("exec-listener"): such a
// handover is refused as malformed. A sandbox of an older helper sends
// "codexd-proxy/1 http=P socks=Q" with the two sockets; that is still understood.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "platform/sandbox/proxy_env.h"

namespace codexd::sandbox {

struct SandboxHandover {
  std::optional<ProxyPorts> proxy;  // set: the first two descriptors are the proxy's listeners
  bool exec_relay = false;          // set: the last descriptor is the exec relay socket (exec_relay.h)

  size_t descriptor_count() const { return (proxy ? 2 : 0) + (exec_relay ? 1 : 0); }
};

std::string encode_handover(const SandboxHandover& handover);
// InvalidArgument naming what is wrong; the descriptor count is checked by the caller.
Result<SandboxHandover> parse_handover(std::string_view payload);

// What the daemon's network proxy reads (daemon/server/proxy_channels.cc).
std::string encode_proxy_message(ProxyPorts ports);

}  // namespace codexd::sandbox
