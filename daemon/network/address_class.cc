#include "daemon/network/address_class.h"

#include <array>
#include <cstdint>

namespace codexd::network {

namespace {

using boost::asio::ip::address_v4;
using boost::asio::ip::address_v6;

bool in_v4(uint32_t address, uint32_t network, int prefix) {
  uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
  return (address & mask) == network;
}

AddressClass classify_v4(uint32_t a) {
  if (a == 0) return AddressClass::kUnspecified;
  if (a == 0xFFFFFFFFu) return AddressClass::kBroadcast;
  if (in_v4(a, 0x00000000u, 8)) return AddressClass::kThisNetwork;
  if (in_v4(a, 0x7F000000u, 8)) return AddressClass::kLoopback;
  if (in_v4(a, 0xA9FE0000u, 16)) return AddressClass::kLinkLocal;
  if (in_v4(a, 0x0A000000u, 8) || in_v4(a, 0xAC100000u, 12) || in_v4(a, 0xC0A80000u, 16)) {
    return AddressClass::kPrivate;
  }
  if (in_v4(a, 0x64400000u, 10)) return AddressClass::kSharedCgnat;
  if (in_v4(a, 0xE0000000u, 4)) return AddressClass::kMulticast;
  if (in_v4(a, 0xF0000000u, 4)) return AddressClass::kReserved;
  return AddressClass::kPublic;
}

uint32_t v4_at(const address_v6::bytes_type& b, size_t offset) {
  return uint32_t{b[offset]} << 24 | uint32_t{b[offset + 1]} << 16 | uint32_t{b[offset + 2]} << 8 | b[offset + 3];
}

bool all_zero(const address_v6::bytes_type& b, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    if (b[i] != 0) return false;
  }
  return true;
}

AddressClass classify_v6(const address_v6& address) {
  const auto b = address.to_bytes();
  if (address.is_unspecified()) return AddressClass::kUnspecified;
  if (address.is_loopback()) return AddressClass::kLoopback;
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated).
  if (all_zero(b, 0, 10) && ((b[10] == 0xFF && b[11] == 0xFF) || (b[10] == 0 && b[11] == 0))) {
    return classify_v4(v4_at(b, 12));
  }
  // 64:ff9b::/96, the well-known NAT64 prefix; 64:ff9b:1::/48 is for local use.
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B) {
    if (all_zero(b, 4, 12)) return classify_v4(v4_at(b, 12));
    if (b[4] == 0 && b[5] == 1) return AddressClass::kPrivate;
  }
  if (b[0] == 0x20 && b[1] == 0x02) return classify_v4(v4_at(b, 2));  // 6to4
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0) return AddressClass::kReserved;  // Teredo
  if (b[0] == 0xFF) return AddressClass::kMulticast;
  if (b[0] == 0xFE && (b[1] & 0xC0) == 0x80) return AddressClass::kLinkLocal;
  if (b[0] == 0xFE && (b[1] & 0xC0) == 0xC0) return AddressClass::kPrivate;  // site-local
  if ((b[0] & 0xFE) == 0xFC) return AddressClass::kPrivate;                  // unique local
  return AddressClass::kPublic;
}

}  // namespace

std::string_view to_string(AddressClass address_class) {
  switch (address_class) {
    case AddressClass::kPublic: return "public";
    case AddressClass::kLoopback: return "loopback";
    case AddressClass::kUnspecified: return "unspecified";
    case AddressClass::kThisNetwork: return "\"this network\" 0.0.0.0/8";
    case AddressClass::kLinkLocal: return "link-local";
    case AddressClass::kPrivate: return "private";
    case AddressClass::kSharedCgnat: return "shared CGNAT";
    case AddressClass::kMulticast: return "multicast";
    case AddressClass::kBroadcast: return "broadcast";
    case AddressClass::kReserved: return "reserved";
  }
  return "unknown";
}

AddressClass classify(const boost::asio::ip::address& address) {
  if (address.is_v4()) return classify_v4(address.to_v4().to_uint());
  return classify_v6(address.to_v6());
}

}  // namespace codexd::network
