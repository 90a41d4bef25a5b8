// The two protocols a proxy listener speaks, each one coroutine per client connection.
#pragma once

#include <memory>

#include "daemon/network/asio.h"

namespace codexd::network {

class Connection;

// HTTP/1.1 forward proxy: absolute-form http:// requests and CONNECT tunnels.
asio::awaitable<void> serve_http(std::shared_ptr<Connection> connection);
// SOCKS5 (RFC 1928): no authentication, CONNECT, ATYP domain/IPv4/IPv6.
asio::awaitable<void> serve_socks5(std::shared_ptr<Connection> connection);

}  // namespace codexd::network
