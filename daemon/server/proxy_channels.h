// The proxy's part of a sandbox's channel: receives the sandbox's listening proxy ports
// ("codexd-proxy/1 http=P socks=Q" with two descriptors, passed on by SandboxChannels) and attaches them to the
// proxy for that sandbox's owner. A malformed or missing handover closes whatever arrived,
// so the command gets "connection refused" rather than a port nobody serves.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>

#include "base/unique_fd.h"
#include "daemon/exec/sandbox_channel.h"
#include "daemon/network/proxy_service.h"

namespace codexd::server {

class ProxyChannels {
 public:
  virtual ~ProxyChannels() = default;
  // The returned handle keeps that sandbox's proxy ports open; drop it when the process has exited.
  virtual std::shared_ptr<void> accept_channel(UniqueFd channel, exec::ChannelOwner owner) = 0;
};

std::shared_ptr<ProxyChannels> make_proxy_channels(boost::asio::io_context& network_io, network::ProxyService& proxy);

}  // namespace codexd::server
