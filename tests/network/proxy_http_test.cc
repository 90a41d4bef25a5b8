// The HTTP listener of the real ProxyService: forward proxy, CONNECT, refusals, the address
// check after our own resolution, limited mode, pipelining, and what the audit records.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/network/proxy_fixture.h"

namespace codexd::network::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class ProxyHttpTest : public ProxyFixture {
 protected:
  std::string origin_url(const std::string& host, const std::string& path = "/hello?q=1") {
    return "http://" + host + ":" + std::to_string(origin_->port()) + path;
  }
};

TEST_F(ProxyHttpTest, AllowedGetReachesTheOriginInOriginFormWithoutProxyHeaders) {
  std::string response = http_get(http_port_, origin_url("127.0.0.1"));
  EXPECT_THAT(response, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(response, HasSubstr("origin saw GET /hello?q=1"));
  auto seen = origin_->wait_for(1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].target, "/hello?q=1");
  EXPECT_EQ(seen[0].host_header, "127.0.0.1:" + std::to_string(origin_->port()));
  EXPECT_EQ(seen[0].proxy_authorization, "");
  auto records = audit_.wait_for(1);
  ASSERT_EQ(records.size(), 1u);
  const ConnectionRecord& record = records[0];
  EXPECT_TRUE(record.allowed);
  EXPECT_EQ(record.target.host, "127.0.0.1");
  EXPECT_EQ(record.target.protocol, Protocol::kHttp);
  EXPECT_EQ(record.target.method, "GET");
  EXPECT_EQ(record.address, "127.0.0.1:" + std::to_string(origin_->port()));
  EXPECT_EQ(record.bytes_down, response.size());
  EXPECT_GT(record.bytes_up, 0u);
  EXPECT_EQ(record.error, "");
  EXPECT_EQ(record.origin.agent_id, "agent-1");
  auto counters = service_->counters();
  EXPECT_EQ(counters.total_allowed, 1u);
  EXPECT_EQ(counters.bytes_down, response.size());
}

TEST_F(ProxyHttpTest, CurlThroughTheHttpProxyGetsTheOriginsBody) {
  auto result = run_command("curl -sS --noproxy '' -x http://127.0.0.1:" + std::to_string(http_port_) + " " +
                            origin_url("127.0.0.1", "/via-curl"));
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.output, "origin saw GET /via-curl");
}

TEST_F(ProxyHttpTest, DeniedHostGets403NamingHostPortAndReason) {
  decider_->set("denied.test", deny("forbidden by network_rule in team.rules"));
  std::string response = http_get(http_port_, "http://Denied.Test./x");
  EXPECT_THAT(response, StartsWith("HTTP/1.1 403 Forbidden"));
  EXPECT_THAT(response, HasSubstr("X-Codexd-Denied: forbidden by network_rule in team.rules"));
  EXPECT_THAT(response, HasSubstr("access to denied.test:80 refused: forbidden by network_rule in team.rules"));
  ASSERT_EQ(decider_->asked().size(), 1u);
  EXPECT_EQ(decider_->asked()[0].host, "denied.test");  // lowercased, trailing dot gone
  auto records = audit_.wait_for(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_FALSE(records[0].allowed);
  EXPECT_EQ(records[0].reason, "forbidden by network_rule in team.rules");
  EXPECT_EQ(records[0].address, "");
  EXPECT_EQ(service_->counters().total_denied, 1u);
}

TEST_F(ProxyHttpTest, ConnectTunnelsBytesBothWays) {
  auto echo = make_echo_server();
  UniqueFd client = connect_loopback(http_port_);
  std::string authority = "127.0.0.1:" + std::to_string(echo->port());
  ASSERT_TRUE(send_all(client.get(), "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n"));
  EXPECT_EQ(read_until(client.get(), "\r\n\r\n"), "HTTP/1.1 200 Connection established\r\n\r\n");
  std::string payload(300 * 1024, 'p');
  ASSERT_TRUE(send_all(client.get(), payload));
  EXPECT_EQ(read_exactly(client.get(), payload.size()), payload);
  ::shutdown(client.get(), SHUT_WR);  // half-close passes through: the echo server closes
  EXPECT_EQ(read_to_end(client.get()), "");
  auto records = audit_.wait_for(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_TRUE(records[0].allowed);
  EXPECT_EQ(records[0].target.protocol, Protocol::kHttps);
  EXPECT_EQ(records[0].target.method, "CONNECT");
  EXPECT_EQ(records[0].bytes_up, payload.size());
  EXPECT_EQ(records[0].bytes_down, payload.size());
}

TEST_F(ProxyHttpTest, DeniedConnectGets403) {
  decider_->set("secret.test", deny("denied by reviewer"));
  UniqueFd client = connect_loopback(http_port_);
  ASSERT_TRUE(send_all(client.get(), "CONNECT secret.test:443 HTTP/1.1\r\nHost: secret.test:443\r\n\r\n"));
  std::string response = read_to_end(client.get());
  EXPECT_THAT(response, StartsWith("HTTP/1.1 403"));
  EXPECT_THAT(response, HasSubstr("X-Codexd-Denied: denied by reviewer"));
  EXPECT_THAT(response, HasSubstr("secret.test:443"));
}

// The rebinding defence: "localhost" allowed by a rule that did not name it exactly still
// cannot reach what it resolves to.
TEST_F(ProxyHttpTest, NameResolvingToLoopbackIsRefusedUnlessTheRuleNamesItExactly) {
  decider_->set("localhost", allow(/*non_public=*/false));
  std::string refused = http_get(http_port_, origin_url("localhost"));
  EXPECT_THAT(refused, StartsWith("HTTP/1.1 403"));
  EXPECT_THAT(refused, HasSubstr("localhost resolves to"));
  EXPECT_THAT(refused, HasSubstr("127.0.0.1 (loopback)"));
  EXPECT_THAT(refused, HasSubstr("only a rule naming this host exactly allows it"));
  auto records = audit_.wait_for(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_FALSE(records[0].allowed);

  decider_->set("localhost", allow(/*non_public=*/true));
  EXPECT_THAT(http_get(http_port_, origin_url("localhost")), HasSubstr("origin saw GET /hello?q=1"));
}

TEST_F(ProxyHttpTest, MetadataAndPrivateLiteralsAreRefusedWithoutConnecting) {
  decider_->set("169.254.169.254", allow(false));
  decider_->set("::ffff:127.0.0.1", allow(false));
  EXPECT_THAT(http_get(http_port_, "http://169.254.169.254/latest/meta-data/"),
              HasSubstr("169.254.169.254 (link-local) is not a public address"));
  EXPECT_THAT(http_get(http_port_, "http://[::ffff:127.0.0.1]:" + std::to_string(origin_->port()) + "/"),
              HasSubstr("(loopback) is not a public address"));
  auto records = audit_.wait_for(2);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].address, "");
  EXPECT_EQ(records[1].address, "");
}

TEST_F(ProxyHttpTest, LimitedModeRefusesPostAndTunnelsButAllowsGet) {
  decider_->set("127.0.0.1", allow(true, /*limited=*/true));
  EXPECT_THAT(http_get(http_port_, origin_url("127.0.0.1", "/read")), HasSubstr("origin saw GET /read"));
  UniqueFd post = connect_loopback(http_port_);
  send_all(post.get(), "POST " + origin_url("127.0.0.1", "/write") + " HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody");
  std::string refused = read_to_end(post.get());
  EXPECT_THAT(refused, StartsWith("HTTP/1.1 403"));
  EXPECT_THAT(refused, HasSubstr("only GET, HEAD and OPTIONS (not POST)"));
  UniqueFd tunnel = connect_loopback(http_port_);
  send_all(tunnel.get(), "CONNECT 127.0.0.1:" + std::to_string(origin_->port()) + " HTTP/1.1\r\n\r\n");
  EXPECT_THAT(read_to_end(tunnel.get()), HasSubstr("tunnel cannot be inspected"));
  EXPECT_EQ(origin_->wait_for(1).size(), 1u);
}

TEST_F(ProxyHttpTest, PostBodyIsForwardedExactlyAsFramed) {
  UniqueFd client = connect_loopback(http_port_);
  send_all(client.get(), "POST " + origin_url("127.0.0.1", "/upload") +
                             " HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
  EXPECT_THAT(read_to_end(client.get()), HasSubstr("origin saw POST /upload"));
  auto seen = origin_->wait_for(1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].body, "hello world");
  EXPECT_EQ(seen[0].bytes_after_request, 0u);
}

TEST_F(ProxyHttpTest, PipelinedSecondRequestIsNeverForwarded) {
  decider_->set("denied.test", deny("forbidden"));
  UniqueFd client = connect_loopback(http_port_);
  std::string first = "GET " + origin_url("127.0.0.1", "/first") + " HTTP/1.1\r\n\r\n";
  // The second, smuggled one would go to the same upstream connection if bytes were copied.
  std::string second = "DELETE /second HTTP/1.1\r\nHost: denied.test\r\n\r\n";
  ASSERT_TRUE(send_all(client.get(), first + second));
  std::string response = read_to_end(client.get());
  EXPECT_THAT(response, HasSubstr("origin saw GET /first"));
  EXPECT_THAT(response, Not(HasSubstr("/second")));
  auto seen = origin_->wait_for(1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].target, "/first");
  EXPECT_EQ(seen[0].bytes_after_request, 0u);
  EXPECT_EQ(decider_->asked().size(), 1u);
}

TEST_F(ProxyHttpTest, MalformedRequestsGet400AndTheProxyKeepsServing) {
  for (std::string bad : {"GARBAGE\r\n\r\n", "GET /origin-form HTTP/1.1\r\nHost: x\r\n\r\n",
                          "GET http://user@127.0.0.1/ HTTP/1.1\r\n\r\n", "CONNECT nohostport HTTP/1.1\r\n\r\n"}) {
    UniqueFd client = connect_loopback(http_port_);
    send_all(client.get(), bad);
    EXPECT_THAT(read_to_end(client.get()), StartsWith("HTTP/1.1 400 Bad Request")) << bad;
  }
  EXPECT_THAT(http_get(http_port_, origin_url("127.0.0.1")), HasSubstr("origin saw GET"));
}

TEST_F(ProxyHttpTest, OversizedHeaderGets431) {
  UniqueFd client = connect_loopback(http_port_);
  std::string request = "GET " + origin_url("127.0.0.1") + " HTTP/1.1\r\nX-Big: " + std::string(100 * 1024, 'b') + "\r\n\r\n";
  send_all(client.get(), request);
  EXPECT_THAT(read_to_end(client.get()), StartsWith("HTTP/1.1 431"));
  EXPECT_TRUE(decider_->asked().empty());
}

TEST_F(ProxyHttpTest, UpstreamRefusingTheConnectionGives502) {
  auto closed_port = [] {
    TestServer server([](tcp::socket) -> asio::awaitable<void> { co_return; });
    return server.port();
  }();  // the listener is gone: connecting is refused
  std::string response = http_get(http_port_, "http://127.0.0.1:" + std::to_string(closed_port) + "/");
  EXPECT_THAT(response, StartsWith("HTTP/1.1 502"));
}

}  // namespace
}  // namespace codexd::network::testing
