// The HTTP listener: Beast parses the request head (with our header limit) and frames the
// body; we never forward a byte it did not frame as this request, so a pipelined second
// request cannot slip past the decision or limited mode. One request per upstream connection
// ("Connection: close"); error responses close the connection.
#include <limits>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/asio/write.hpp>

#include "daemon/network/connection.h"
#include "daemon/network/http_errors.h"
#include "daemon/network/sessions.h"
#include "daemon/network/target_parse.h"

namespace codexd::network {

namespace {

namespace http = boost::beast::http;
using Parser = http::request_parser<http::buffer_body>;
using Request = http::request<http::buffer_body>;

constexpr size_t kBodyChunk = 64 * 1024;
constexpr std::string_view kConnectEstablished = "HTTP/1.1 200 Connection established\r\n\r\n";
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

bool iequals(std::string_view a, std::string_view b) { return boost::beast::iequals(a, b); }

// Hop-by-hop headers (RFC 9110 7.6.1), those named in Connection, and the proxy's own
// credentials go no further; the origin gets origin-form and one request.
void prepare_forwarded(Request& request, const HttpUrl& url, std::string_view authority) {
  std::vector<std::string> named;
  for (auto token : http::token_list(request[http::field::connection])) named.emplace_back(token);
  for (const auto& name : named) {
    if (!iequals(name, "content-length") && !iequals(name, "transfer-encoding") && !iequals(name, "host")) {
      request.erase(name);
    }
  }
  for (http::field field : {http::field::connection, http::field::keep_alive, http::field::proxy_connection,
                            http::field::proxy_authorization, http::field::proxy_authenticate, http::field::te,
                            http::field::trailer, http::field::upgrade, http::field::expect}) {
    request.erase(field);
  }
  if (request.chunked()) request.erase(http::field::content_length);  // one framing, the one we parsed
  request.target(url.origin_form);
  request.version(11);
  request.set(http::field::host, authority);
  request.set(http::field::connection, "close");
}

asio::awaitable<void> answer_read_error(Connection& c, error_code ec) {
  if (c.timed_out()) {
    co_await send_http_error(c, http::status::request_timeout,
                             "the request head did not arrive within " +
                                 std::to_string(c.options().header_timeout_ms) + " ms");
  } else if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
    co_await send_http_error(c, http::status::request_header_fields_too_large,
                             "the request head is larger than " + std::to_string(c.options().max_header_bytes) +
                                 " bytes");
  } else if (ec == http::error::end_of_stream || ec == asio::error::eof || c.aborted() ||
             ec == asio::error::connection_reset) {
    c.fail("the client closed the connection before sending a request");
    c.close_all();
  } else {
    co_await send_http_error(c, http::status::bad_request, "malformed request: " + ec.message());
  }
}

// Streams the request (head, then the body Beast frames, re-chunked when chunked) upstream.
// Beast's documented relay loop, asynchronous.
asio::awaitable<bool> forward_request(Connection& c, boost::beast::flat_buffer& buffer, Parser& parser) {
  Request& request = parser.get();
  http::serializer<true, http::buffer_body> serializer{request};
  std::vector<char> chunk(kBodyChunk);
  error_code ec;
  do {
    if (!parser.is_done()) {
      request.body().data = chunk.data();
      request.body().size = chunk.size();
      co_await http::async_read(c.client(), buffer, parser, into(ec));
      if (ec == http::error::need_buffer) ec = {};
      if (ec) {
        c.fail("client: reading the request body: " + ec.message());
        co_return false;
      }
      request.body().size = chunk.size() - request.body().size;
      request.body().data = chunk.data();
      request.body().more = !parser.is_done();
    } else {
      request.body().data = nullptr;
      request.body().size = 0;
      request.body().more = false;  // buffer_body defaults to "more is coming"
    }
    size_t written = co_await http::async_write(c.upstream(), serializer, into(ec));
    if (ec == http::error::need_buffer) ec = {};
    if (ec) {
      c.fail("upstream: sending the request: " + ec.message());
      co_return false;
    }
    c.count_up(written);
    c.touch();
  } while (!parser.is_done() && !serializer.is_done());
  co_return true;
}

asio::awaitable<void> serve_forward(std::shared_ptr<Connection> c, boost::beast::flat_buffer& buffer, Parser& parser) {
  Request& request = parser.get();
  auto url = parse_http_url(request.target());
  if (!url.ok()) {
    co_await send_http_error(*c, http::status::bad_request, url.status().message());
    co_return;
  }
  c->record().target = ConnectTarget{url->authority.host, url->authority.port, Protocol::kHttp,
                                     std::string(request.method_string())};
  Authorization authorization = co_await c->authorize_and_connect();
  if (authorization.outcome != Authorization::Outcome::kConnected) {
    co_await answer_refusal(*c, authorization);
    co_return;
  }
  bool expect_continue = iequals(request[http::field::expect], "100-continue");
  std::string authority = url->authority.host.find(':') != std::string::npos ? "[" + url->authority.host + "]"
                                                                              : url->authority.host;
  if (url->authority.port != 80) authority += ":" + std::to_string(url->authority.port);
  prepare_forwarded(request, *url, authority);
  c->start_idle_clock();
  error_code ec;
  if (expect_continue && !parser.is_done()) co_await asio::async_write(c->client(), asio::buffer(kContinue), into(ec));
  bool forwarded = false;
  if (!ec) forwarded = co_await forward_request(*c, buffer, parser);  // (no co_await inside || : GCC 12)
  if (!forwarded) {
    c->close_all();
    co_return;
  }
  co_await c->relay(false);  // the response; the client's further bytes are never read
}

asio::awaitable<void> serve_connect(std::shared_ptr<Connection> c, boost::beast::flat_buffer& buffer,
                                    const Request& request) {
  auto authority = parse_authority(request.target());
  if (!authority.ok()) {
    co_await send_http_error(*c, http::status::bad_request, "CONNECT target: " + authority.status().message());
    co_return;
  }
  c->record().target = ConnectTarget{authority->host, authority->port, Protocol::kHttps, "CONNECT"};
  Authorization authorization = co_await c->authorize_and_connect();
  if (authorization.outcome != Authorization::Outcome::kConnected) {
    co_await answer_refusal(*c, authorization);
    co_return;
  }
  error_code ec;
  c->arm_deadline(c->options().header_timeout_ms);
  co_await asio::async_write(c->client(), asio::buffer(kConnectEstablished), into(ec));
  // Bytes the client sent after the head belong to the tunnel the decision allowed.
  if (!ec && buffer.size() > 0) {
    size_t early = co_await asio::async_write(c->upstream(), buffer.data(), into(ec));
    c->count_up(early);
  }
  c->disarm_deadline();
  if (ec) {
    c->fail("starting the tunnel: " + ec.message());
    c->close_all();
    co_return;
  }
  co_await c->relay(true);
}

}  // namespace

asio::awaitable<void> serve_http(std::shared_ptr<Connection> c) {
  if (!c->admission_refusal().empty()) {
    co_await send_http_error(*c, http::status::service_unavailable, c->admission_refusal());
    co_return;
  }
  boost::beast::flat_buffer buffer(c->options().max_header_bytes + kBodyChunk);
  auto parser = std::make_unique<Parser>();
  parser->header_limit(static_cast<uint32_t>(c->options().max_header_bytes));
  parser->body_limit(std::numeric_limits<uint64_t>::max());  // streamed in kBodyChunk pieces, never held whole
  error_code ec;
  c->arm_deadline(c->options().header_timeout_ms);
  co_await http::async_read_header(c->client(), buffer, *parser, into(ec));
  c->disarm_deadline();
  if (ec) {
    co_await answer_read_error(*c, ec);
  } else if (parser->get().method() == http::verb::connect) {
    co_await serve_connect(c, buffer, parser->get());
  } else {
    co_await serve_forward(c, buffer, *parser);
  }
}

}  // namespace codexd::network
