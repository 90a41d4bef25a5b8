// The SOCKS5 listener of the real ProxyService (RFC 1928), with curl and a raw client.
#include <arpa/inet.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/network/proxy_fixture.h"

namespace codexd::network::testing {
namespace {

using ::testing::HasSubstr;

class ProxySocksTest : public ProxyFixture {
 protected:
  // Greeting (no auth) + CONNECT to a domain; returns the 10-byte reply (or what came).
  std::string socks_connect_domain(int fd, const std::string& host, uint16_t port) {
    send_all(fd, std::string("\x05\x01\x00", 3));
    if (read_exactly(fd, 2) != std::string("\x05\x00", 2)) return "no method";
    std::string request("\x05\x01\x00\x03", 4);
    request.push_back(static_cast<char>(host.size()));
    request += host;
    request.push_back(static_cast<char>(port >> 8));
    request.push_back(static_cast<char>(port & 0xFF));
    send_all(fd, request);
    return read_exactly(fd, 10);
  }
  std::string curl_socks(const std::string& host, const std::string& path) {
    return "curl -sS --noproxy '' --socks5-hostname 127.0.0.1:" + std::to_string(socks_port_) + " http://" + host +
           ":" + std::to_string(origin_->port()) + path + " 2>&1";
  }
};

TEST_F(ProxySocksTest, CurlWithAHostNameIsAllowedByTheDecision) {
  decider_->set("localhost", allow(/*non_public=*/true));
  auto result = run_command(curl_socks("LocalHost", "/socks"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "origin saw GET /socks");
  auto records = audit_.wait_for(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_TRUE(records[0].allowed);
  EXPECT_EQ(records[0].target.host, "localhost");
  EXPECT_EQ(records[0].target.protocol, Protocol::kSocks5Tcp);
  EXPECT_EQ(records[0].target.method, "");
  EXPECT_GT(records[0].bytes_down, 0u);
}

TEST_F(ProxySocksTest, CurlToADeniedHostFailsAndNothingReachesTheOrigin) {
  decider_->set("localhost", deny("forbidden by network_rule in team.rules"));
  auto result = run_command(curl_socks("localhost", "/nope"));
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.output, ::testing::Not(HasSubstr("origin saw")));
  auto records = audit_.wait_for(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_FALSE(records[0].allowed);
  EXPECT_EQ(records[0].reason, "forbidden by network_rule in team.rules");
}

TEST_F(ProxySocksTest, DeniedAndLoopbackRefusalsReplyNotAllowedByRuleset) {
  decider_->set("denied.test", deny("no"));
  decider_->set("localhost", allow(/*non_public=*/false));
  for (const char* host : {"denied.test", "localhost"}) {
    UniqueFd client = connect_loopback(socks_port_);
    std::string reply = socks_connect_domain(client.get(), host, origin_->port());
    ASSERT_EQ(reply.size(), 10u) << host;
    EXPECT_EQ(reply[1], '\x02') << host;
  }
}

TEST_F(ProxySocksTest, Ipv4ConnectTunnelsBothWaysWithTheBoundAddress) {
  auto echo = make_echo_server();
  UniqueFd client = connect_loopback(socks_port_);
  send_all(client.get(), std::string("\x05\x01\x00", 3));
  ASSERT_EQ(read_exactly(client.get(), 2), std::string("\x05\x00", 2));
  std::string request("\x05\x01\x00\x01\x7f\x00\x00\x01", 8);
  request.push_back(static_cast<char>(echo->port() >> 8));
  request.push_back(static_cast<char>(echo->port() & 0xFF));
  send_all(client.get(), request);
  std::string reply = read_exactly(client.get(), 10);
  ASSERT_EQ(reply.size(), 10u);
  EXPECT_EQ(reply.substr(0, 8), std::string("\x05\x00\x00\x01\x7f\x00\x00\x01", 8));
  send_all(client.get(), "ping through socks");
  EXPECT_EQ(read_exactly(client.get(), 18), "ping through socks");
}

TEST_F(ProxySocksTest, UnsupportedMethodsCommandsAndAddressTypesGetTheirReplyCodes) {
  {  // only username/password offered
    UniqueFd client = connect_loopback(socks_port_);
    send_all(client.get(), std::string("\x05\x01\x02", 3));
    EXPECT_EQ(read_to_end(client.get()), std::string("\x05\xff", 2));
  }
  {  // BIND
    UniqueFd client = connect_loopback(socks_port_);
    send_all(client.get(), std::string("\x05\x01\x00", 3));
    read_exactly(client.get(), 2);
    send_all(client.get(), std::string("\x05\x02\x00\x01\x7f\x00\x00\x01\x00\x50", 10));
    std::string reply = read_to_end(client.get());
    ASSERT_GE(reply.size(), 2u);
    EXPECT_EQ(reply[1], '\x07');
  }
  {  // ATYP 9
    UniqueFd client = connect_loopback(socks_port_);
    send_all(client.get(), std::string("\x05\x01\x00", 3));
    read_exactly(client.get(), 2);
    send_all(client.get(), std::string("\x05\x01\x00\x09", 4));
    std::string reply = read_to_end(client.get());
    ASSERT_GE(reply.size(), 2u);
    EXPECT_EQ(reply[1], '\x08');
  }
  {  // SOCKS4: closed without a reply
    UniqueFd client = connect_loopback(socks_port_);
    send_all(client.get(), std::string("\x04\x01\x00\x50\x7f\x00\x00\x01\x00", 9));
    EXPECT_EQ(read_to_end(client.get()), "");
  }
  EXPECT_TRUE(decider_->asked().empty());
  auto records = audit_.wait_for(4);
  ASSERT_EQ(records.size(), 4u);
  for (const auto& record : records) EXPECT_NE(record.error, "");
  decider_->set("localhost", allow(true));
  EXPECT_EQ(run_command(curl_socks("localhost", "/still-fine")).output, "origin saw GET /still-fine");
}

}  // namespace
}  // namespace codexd::network::testing
