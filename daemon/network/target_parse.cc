#include "daemon/network/target_parse.h"

#include <charconv>

#include <boost/asio/ip/address.hpp>

namespace codexd::network {

namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

Result<uint16_t> parse_port(std::string_view text) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value == 0 || value > 65535) {
    return InvalidArgument("invalid port \"" + std::string(text) + "\"");
  }
  return static_cast<uint16_t>(value);
}

}  // namespace

Result<std::string> normalize_host(std::string_view host, bool bracketed) {
  std::string out;
  out.reserve(host.size());
  for (char c : host) out.push_back(lower(c));
  if (bracketed) {
    boost::system::error_code ec;
    auto v6 = boost::asio::ip::make_address_v6(out, ec);
    if (ec || v6.scope_id() != 0) return InvalidArgument("invalid IPv6 address \"" + std::string(host) + "\"");
    return out;
  }
  if (!out.empty() && out.back() == '.') out.pop_back();
  if (out.empty() || out.size() > 253) return InvalidArgument("invalid host name \"" + std::string(host) + "\"");
  for (char c : out) {
    if (!name_char(c)) return InvalidArgument("invalid host name \"" + std::string(host) + "\"");
  }
  return out;
}

Result<HostPort> parse_authority(std::string_view authority, uint16_t default_port) {
  std::string_view host = authority;
  std::string_view port;
  bool bracketed = false;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return InvalidArgument("unterminated IPv6 literal");
    host = authority.substr(1, close - 1);
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return InvalidArgument("junk after the IPv6 literal");
    if (!rest.empty()) port = rest.substr(1);
    bracketed = true;
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  CODEXD_ASSIGN_OR_RETURN(std::string name, normalize_host(host, bracketed));
  HostPort out{std::move(name), default_port};
  if (bracketed ? authority.find("]:") != std::string_view::npos : authority.find(':') != std::string_view::npos) {
    CODEXD_ASSIGN_OR_RETURN(out.port, parse_port(port));
  }
  if (out.port == 0) return InvalidArgument("a port is required (host:port)");
  return out;
}

Result<HttpUrl> parse_http_url(std::string_view target) {
  constexpr std::string_view kScheme = "http://";
  std::string scheme;
  for (char c : target.substr(0, kScheme.size())) scheme.push_back(lower(c));
  if (scheme != kScheme) {
    if (scheme.rfind("https:", 0) == 0) return InvalidArgument("https:// URLs go through CONNECT");
    return InvalidArgument("a proxy request needs an absolute http:// URL");
  }
  std::string_view rest = target.substr(kScheme.size());
  size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  if (authority.find('@') != std::string_view::npos) return InvalidArgument("user info in the URL is not allowed");
  CODEXD_ASSIGN_OR_RETURN(HostPort host_port, parse_authority(authority, 80));
  std::string_view path = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  path = path.substr(0, path.find('#'));
  std::string origin_form(path);
  if (origin_form.empty() || origin_form.front() != '/') origin_form.insert(0, "/");
  return HttpUrl{std::move(host_port), std::move(origin_form)};
}

}  // namespace codexd::network
