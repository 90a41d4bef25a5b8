// The ProxyChannelSink of the daemon: receives a sandbox's listening proxy ports over its
// channel ("codexd-proxy/1 http=P socks=Q" with two descriptors) and attaches them to the
// proxy for that sandbox's owner. A malformed or missing handover closes whatever arrived,
// so the command gets "connection refused" rather than a port nobody serves.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>

#include "daemon/exec/proxy_channel.h"
#include "daemon/network/proxy_service.h"

namespace codexd::server {

std::shared_ptr<exec::ProxyChannelSink> make_proxy_channels(boost::asio::io_context& network_io,
                                                            network::ProxyService& proxy);

}  // namespace codexd::server
