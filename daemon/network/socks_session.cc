// The SOCKS5 listener (RFC 1928): the greeting must offer "no authentication", the request
// must be CONNECT; ATYP domain, IPv4 and IPv6. Everything else gets the RFC's reply code.
#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "daemon/network/connection.h"
#include "daemon/network/sessions.h"
#include "daemon/network/target_parse.h"

namespace codexd::network {

namespace {

constexpr uint8_t kVersion = 5;
constexpr uint8_t kNoAuth = 0x00;
constexpr uint8_t kNoAcceptableMethod = 0xFF;
constexpr uint8_t kCommandConnect = 0x01;
enum AddressType : uint8_t { kIpv4 = 0x01, kDomain = 0x03, kIpv6 = 0x04 };
enum Reply : uint8_t {
  kSucceeded = 0x00,
  kGeneralFailure = 0x01,
  kNotAllowed = 0x02,
  kHostUnreachable = 0x04,
  kConnectionRefused = 0x05,
  kCommandNotSupported = 0x07,
  kAddressTypeNotSupported = 0x08,
};

// A parsed request, or why not: `reply` is sent when set (some errors have no reply).
struct SocksRequest {
  std::optional<ConnectTarget> target;
  std::optional<uint8_t> reply;
  std::string error;
};

asio::awaitable<bool> read_exactly(Connection& c, void* data, size_t size) {
  error_code ec;
  co_await asio::async_read(c.client(), asio::buffer(data, size), into(ec));
  co_return !ec;
}

asio::awaitable<void> send_reply(Connection& c, uint8_t reply, const tcp::endpoint& bound = {}) {
  std::vector<uint8_t> out{kVersion, reply, 0x00};
  if (bound.address().is_v6()) {
    out.push_back(kIpv6);
    auto bytes = bound.address().to_v6().to_bytes();
    out.insert(out.end(), bytes.begin(), bytes.end());
  } else {
    out.push_back(kIpv4);
    auto bytes = bound.address().to_v4().to_bytes();
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  out.push_back(static_cast<uint8_t>(bound.port() >> 8));
  out.push_back(static_cast<uint8_t>(bound.port() & 0xFF));
  error_code ec;
  c.arm_deadline(c.options().header_timeout_ms);
  co_await asio::async_write(c.client(), asio::buffer(out), into(ec));
  c.disarm_deadline();
}

// Greeting: VER NMETHODS METHODS...; we answer VER 00 or VER FF.
asio::awaitable<std::string> negotiate_method(Connection& c) {
  std::array<uint8_t, 2> head{};
  if (!co_await read_exactly(c, head.data(), head.size())) co_return "the client sent no SOCKS5 greeting";
  if (head[0] != kVersion) co_return "not a SOCKS5 greeting (version " + std::to_string(head[0]) + ")";
  std::vector<uint8_t> methods(head[1]);
  if (!co_await read_exactly(c, methods.data(), methods.size())) co_return "the SOCKS5 greeting was cut short";
  bool no_auth = std::find(methods.begin(), methods.end(), kNoAuth) != methods.end();
  std::array<uint8_t, 2> answer{kVersion, no_auth ? kNoAuth : kNoAcceptableMethod};
  error_code ec;
  co_await asio::async_write(c.client(), asio::buffer(answer), into(ec));
  if (!no_auth) co_return "the client offered no acceptable SOCKS5 method (only \"no authentication\" is supported)";
  co_return ec ? "client: " + ec.message() : "";
}

asio::awaitable<std::optional<std::string>> read_host(Connection& c, uint8_t address_type) {
  if (address_type == kIpv4) {
    asio::ip::address_v4::bytes_type bytes{};
    if (!co_await read_exactly(c, bytes.data(), bytes.size())) co_return std::nullopt;
    co_return asio::ip::address_v4(bytes).to_string();
  }
  if (address_type == kIpv6) {
    asio::ip::address_v6::bytes_type bytes{};
    if (!co_await read_exactly(c, bytes.data(), bytes.size())) co_return std::nullopt;
    co_return asio::ip::address_v6(bytes).to_string();
  }
  uint8_t length = 0;
  if (!co_await read_exactly(c, &length, 1)) co_return std::nullopt;
  std::string name(length, '\0');
  if (!co_await read_exactly(c, name.data(), name.size())) co_return std::nullopt;
  co_return name;
}

// Request: VER CMD RSV ATYP DST.ADDR DST.PORT.
asio::awaitable<SocksRequest> read_request(Connection& c) {
  std::array<uint8_t, 4> head{};
  if (!co_await read_exactly(c, head.data(), head.size())) co_return SocksRequest{{}, {}, "the SOCKS5 request was cut short"};
  if (head[0] != kVersion) co_return SocksRequest{{}, kGeneralFailure, "bad SOCKS5 request version"};
  if (head[1] != kCommandConnect) {
    co_return SocksRequest{{}, kCommandNotSupported, "SOCKS5 command " + std::to_string(head[1]) + " is not supported (only CONNECT)"};
  }
  if (head[3] != kIpv4 && head[3] != kDomain && head[3] != kIpv6) {
    co_return SocksRequest{{}, kAddressTypeNotSupported, "SOCKS5 address type " + std::to_string(head[3]) + " is not supported"};
  }
  std::optional<std::string> host = co_await read_host(c, head[3]);
  std::array<uint8_t, 2> port{};
  bool complete = false;
  if (host) complete = co_await read_exactly(c, port.data(), port.size());
  if (!complete) {
    co_return SocksRequest{{}, {}, "the SOCKS5 request was cut short"};
  }
  auto name = normalize_host(*host, host->find(':') != std::string::npos);
  uint16_t port_number = static_cast<uint16_t>(port[0] << 8 | port[1]);
  if (!name.ok() || port_number == 0) {
    co_return SocksRequest{{}, kGeneralFailure, name.ok() ? "port 0" : name.status().message()};
  }
  co_return SocksRequest{ConnectTarget{*name, port_number, Protocol::kSocks5Tcp, ""}, {}, ""};
}

uint8_t reply_for(Authorization::Outcome outcome) {
  switch (outcome) {
    case Authorization::Outcome::kDenied: return kNotAllowed;
    case Authorization::Outcome::kRefused: return kConnectionRefused;
    default: return kHostUnreachable;
  }
}

}  // namespace

asio::awaitable<void> serve_socks5(std::shared_ptr<Connection> c) {
  if (!c->admission_refusal().empty()) {
    c->close_all();  // before the greeting SOCKS5 has no way to say why
    co_return;
  }
  c->arm_deadline(c->options().header_timeout_ms);
  std::string error = co_await negotiate_method(*c);
  SocksRequest request{{}, {}, error};
  if (error.empty()) request = co_await read_request(*c);  // (no co_await inside ?: : GCC 12)
  c->disarm_deadline();
  if (!request.target) {
    if (request.reply) co_await send_reply(*c, *request.reply);
    c->fail(c->timed_out() ? "the SOCKS5 request did not arrive within " +
                                 std::to_string(c->options().header_timeout_ms) + " ms"
                           : request.error);
    co_await c->linger_and_close();
    co_return;
  }
  c->record().target = *request.target;
  Authorization authorization = co_await c->authorize_and_connect();
  if (authorization.outcome != Authorization::Outcome::kConnected) {
    if (authorization.outcome != Authorization::Outcome::kGone) co_await send_reply(*c, reply_for(authorization.outcome));
    co_await c->linger_and_close();
    co_return;
  }
  error_code ec;
  co_await send_reply(*c, kSucceeded, c->upstream().local_endpoint(ec));
  co_await c->relay(true);
}

}  // namespace codexd::network
