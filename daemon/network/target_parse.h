// The few pieces of a proxy request's target that Beast leaves to us: the authority of a
// CONNECT ("host:port", "[v6]:port") and of an absolute-form http:// URL. Host names are
// normalized the way the decision sees them: lowercase, no trailing dot.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace codexd::network {

struct HostPort {
  std::string host;  // normalized; an IPv6 literal without brackets
  uint16_t port = 0;
};

// Lowercases, removes one trailing dot, and accepts only DNS name characters (letters,
// digits, '-', '_', '.') or an IP literal (IPv6 only where `bracketed`).
Result<std::string> normalize_host(std::string_view host, bool bracketed = false);

// "host:port" or "[v6]:port"; without a port `default_port` is used (0: the port is required).
Result<HostPort> parse_authority(std::string_view authority, uint16_t default_port = 0);

struct HttpUrl {
  HostPort authority;
  std::string origin_form;  // "/path?query" ("/" when empty), what the origin server gets
};

// An absolute-form request target, "http://host[:port]/path?query" (scheme in any case).
// https:// (clients CONNECT for it), user info ("user@host") and origin-form are refused.
Result<HttpUrl> parse_http_url(std::string_view target);

}  // namespace codexd::network
