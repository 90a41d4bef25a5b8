// Which kind of destination an IP address is. The proxy checks the address it actually
// connects to (after its own DNS resolution), so a name that resolves to a private address
// (DNS rebinding) is refused like the address itself.
#pragma once

#include <string_view>

#include <boost/asio/ip/address.hpp>

namespace codexd::network {

enum class AddressClass {
  kPublic,
  kLoopback,      // 127/8, ::1
  kUnspecified,   // 0.0.0.0, ::
  kThisNetwork,   // 0/8
  kLinkLocal,     // 169.254/16 (cloud metadata 169.254.169.254), fe80::/10
  kPrivate,       // 10/8, 172.16/12, 192.168/16, fc00::/7, fec0::/10, 64:ff9b:1::/48
  kSharedCgnat,   // 100.64/10
  kMulticast,     // 224/4, ff00::/8
  kBroadcast,     // 255.255.255.255
  kReserved,      // 240/4, Teredo 2001::/32 (the IPv4 inside is obscured)
};

// "loopback", "link-local", ...: the words the refusal reason uses.
std::string_view to_string(AddressClass address_class);

// IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4
// (2002:AABB:CCDD::/48) IPv6 addresses are judged as the IPv4 address inside.
AddressClass classify(const boost::asio::ip::address& address);

}  // namespace codexd::network
