#include "daemon/network/address_class.h"

#include <gtest/gtest.h>

namespace codexd::network {
namespace {

AddressClass of(const char* text) { return classify(boost::asio::ip::make_address(text)); }

TEST(AddressClassTest, Ipv4Ranges) {
  EXPECT_EQ(of("8.8.8.8"), AddressClass::kPublic);
  EXPECT_EQ(of("127.0.0.1"), AddressClass::kLoopback);
  EXPECT_EQ(of("127.255.1.2"), AddressClass::kLoopback);
  EXPECT_EQ(of("0.0.0.0"), AddressClass::kUnspecified);
  EXPECT_EQ(of("0.1.2.3"), AddressClass::kThisNetwork);
  EXPECT_EQ(of("169.254.169.254"), AddressClass::kLinkLocal);
  EXPECT_EQ(of("10.1.2.3"), AddressClass::kPrivate);
  EXPECT_EQ(of("172.16.0.1"), AddressClass::kPrivate);
  EXPECT_EQ(of("172.31.255.255"), AddressClass::kPrivate);
  EXPECT_EQ(of("172.32.0.1"), AddressClass::kPublic);
  EXPECT_EQ(of("192.168.1.1"), AddressClass::kPrivate);
  EXPECT_EQ(of("100.64.0.1"), AddressClass::kSharedCgnat);
  EXPECT_EQ(of("100.127.255.255"), AddressClass::kSharedCgnat);
  EXPECT_EQ(of("100.128.0.1"), AddressClass::kPublic);
  EXPECT_EQ(of("224.0.0.1"), AddressClass::kMulticast);
  EXPECT_EQ(of("255.255.255.255"), AddressClass::kBroadcast);
  EXPECT_EQ(of("240.0.0.1"), AddressClass::kReserved);
}

TEST(AddressClassTest, Ipv6RangesAndEmbeddedIpv4) {
  EXPECT_EQ(of("2606:4700::1111"), AddressClass::kPublic);
  EXPECT_EQ(of("::1"), AddressClass::kLoopback);
  EXPECT_EQ(of("::"), AddressClass::kUnspecified);
  EXPECT_EQ(of("fe80::1"), AddressClass::kLinkLocal);
  EXPECT_EQ(of("fd00::1"), AddressClass::kPrivate);
  EXPECT_EQ(of("fc00::1"), AddressClass::kPrivate);
  EXPECT_EQ(of("ff02::1"), AddressClass::kMulticast);
  EXPECT_EQ(of("::ffff:127.0.0.1"), AddressClass::kLoopback);
  EXPECT_EQ(of("::ffff:169.254.169.254"), AddressClass::kLinkLocal);
  EXPECT_EQ(of("::ffff:8.8.8.8"), AddressClass::kPublic);
  EXPECT_EQ(of("::10.0.0.1"), AddressClass::kPrivate);  // IPv4-compatible
  EXPECT_EQ(of("64:ff9b::7f00:1"), AddressClass::kLoopback);
  EXPECT_EQ(of("64:ff9b::808:808"), AddressClass::kPublic);
  EXPECT_EQ(of("64:ff9b:1::1"), AddressClass::kPrivate);
  EXPECT_EQ(of("2002:c0a8:0101::1"), AddressClass::kPrivate);  // 6to4 of 192.168.1.1
  EXPECT_EQ(of("2001:0:4136:e378::1"), AddressClass::kReserved);  // Teredo
}

}  // namespace
}  // namespace codexd::network
