// The proxy's own HTTP answers: every one is text/plain, says what happened in one line,
// and closes the connection. A refusal (403) also carries X-Codexd-Denied: <reason>.
#pragma once

#include <string>

#include <boost/beast/http/status.hpp>

#include "daemon/network/asio.h"

namespace codexd::network {

class Connection;
struct Authorization;

// Header name of the refusal reason on a 403.
inline constexpr char kDeniedHeader[] = "X-Codexd-Denied";

// Writes the response (bounded by header_timeout_ms), then lingers and closes.
asio::awaitable<void> send_http_error(Connection& connection, boost::beast::http::status status, std::string detail);

// 403 for a refusal, 502 when the upstream could not be reached, 504 on connect timeout;
// nothing (just closing) when the client is gone.
asio::awaitable<void> answer_refusal(Connection& connection, const Authorization& authorization);

}  // namespace codexd::network
