#include "daemon/network/http_errors.h"

#include <boost/beast/http.hpp>

#include "daemon/network/connection.h"

namespace codexd::network {

namespace {

namespace http = boost::beast::http;

constexpr size_t kMaxHeaderReason = 400;

// A header value cannot carry control characters (CR/LF would split the response).
std::string header_safe(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, kMaxHeaderReason)) {
    out.push_back(static_cast<unsigned char>(c) < 0x20 || c == 0x7F ? ' ' : c);
  }
  return out;
}

std::string target_text(const ConnectTarget& target) {
  if (target.host.find(':') != std::string::npos) return "[" + target.host + "]:" + std::to_string(target.port);
  return target.host + ":" + std::to_string(target.port);
}

}  // namespace

asio::awaitable<void> send_http_error(Connection& c, http::status status, std::string detail) {
  http::response<http::string_body> response{status, 11};
  response.set(http::field::server, "codexd");
  response.set(http::field::content_type, "text/plain; charset=utf-8");
  response.set(http::field::connection, "close");
  if (status == http::status::forbidden) {
    response.set(kDeniedHeader, header_safe(detail));
    response.body() = "codexd proxy: access to " + target_text(c.record().target) + " refused: " + detail + "\n";
  } else {
    response.body() = "codexd proxy: " + std::string(http::obsolete_reason(status)) + ": " + detail + "\n";
  }
  response.prepare_payload();
  if (status != http::status::forbidden) c.fail(std::to_string(static_cast<unsigned>(status)) + " " + detail);
  c.arm_deadline(c.options().header_timeout_ms);
  error_code ec;
  co_await http::async_write(c.client(), response, into(ec));
  co_await c.linger_and_close();
}

asio::awaitable<void> answer_refusal(Connection& c, const Authorization& authorization) {
  using Outcome = Authorization::Outcome;
  switch (authorization.outcome) {
    case Outcome::kDenied:
      co_await send_http_error(c, http::status::forbidden, authorization.detail);
      break;
    case Outcome::kUnreachable:
    case Outcome::kRefused:
      co_await send_http_error(c, http::status::bad_gateway, authorization.detail);
      break;
    case Outcome::kTimedOut:
      co_await send_http_error(c, http::status::gateway_timeout, authorization.detail);
      break;
    case Outcome::kConnected:
    case Outcome::kGone:
      c.close_all();
      break;
  }
}

}  // namespace codexd::network
