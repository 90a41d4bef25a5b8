// Time and lifetime: header timeouts while others are served, a decider that answers late,
// a client leaving while it waits, closing an attachment with live connections, and caps.
#include <sys/socket.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/network/proxy_fixture.h"

namespace codexd::network::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class ProxyLifecycleTest : public ProxyFixture {
 protected:
  ProxyOptions options() const override {
    ProxyOptions options;
    options.header_timeout_ms = 300;
    options.max_connections_per_origin = 3;
    return options;
  }
  std::string get_line() const {
    return "GET http://127.0.0.1:" + std::to_string(origin_->port()) + "/late HTTP/1.1\r\n\r\n";
  }
};

TEST_F(ProxyLifecycleTest, SlowlorisGets408WhileAnotherClientIsServed) {
  UniqueFd slow = connect_loopback(http_port_);
  send_all(slow.get(), "GET http://127.0.0.1/ HTTP/1.1\r\nX-Slow: ");  // and never more
  EXPECT_THAT(http_get(http_port_, "http://127.0.0.1:" + std::to_string(origin_->port()) + "/meanwhile"),
              HasSubstr("origin saw GET /meanwhile"));
  std::string response = read_to_end(slow.get());
  EXPECT_THAT(response, StartsWith("HTTP/1.1 408"));
  EXPECT_THAT(response, HasSubstr("within 300 ms"));
}

TEST_F(ProxyLifecycleTest, SocksGreetingTimesOutToo) {
  UniqueFd slow = connect_loopback(socks_port_);
  send_all(slow.get(), std::string("\x05", 1));
  EXPECT_EQ(read_to_end(slow.get()), "");
  auto records = audit_.wait_for(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_THAT(records[0].error, HasSubstr("did not arrive within 300 ms"));
}

TEST_F(ProxyLifecycleTest, LateDecisionHoldsTheConnectionThenProceeds) {
  decider_->hold(true);
  UniqueFd client = connect_loopback(http_port_);
  send_all(client.get(), get_line());
  ASSERT_TRUE(decider_->wait_pending(1));
  EXPECT_TRUE(nothing_to_read(client.get()));  // held, not refused, past the 300 ms header timeout or not
  decider_->release();
  EXPECT_THAT(read_to_end(client.get()), HasSubstr("origin saw GET /late"));
}

TEST_F(ProxyLifecycleTest, ClientLeavingWhileTheDecisionWaitsIsRecorded) {
  decider_->hold(true);
  {
    UniqueFd client = connect_loopback(http_port_);
    send_all(client.get(), get_line());
    ASSERT_TRUE(decider_->wait_pending(1));
  }  // closed
  auto records = audit_.wait_for(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_THAT(records[0].error, HasSubstr("closed the connection while the decision was pending"));
  EXPECT_FALSE(records[0].allowed);
  decider_->hold(false);
  decider_->release();  // the answer arrives for a connection that is gone
  EXPECT_THAT(http_get(http_port_, "http://127.0.0.1:" + std::to_string(origin_->port()) + "/after"),
              HasSubstr("origin saw GET /after"));
}

TEST_F(ProxyLifecycleTest, ClosingTheAttachmentClosesListenersAndLiveConnections) {
  auto echo = make_echo_server();
  UniqueFd tunnel = connect_loopback(http_port_);
  send_all(tunnel.get(), "CONNECT 127.0.0.1:" + std::to_string(echo->port()) + " HTTP/1.1\r\n\r\n");
  ASSERT_THAT(read_until(tunnel.get(), "\r\n\r\n"), StartsWith("HTTP/1.1 200"));
  decider_->hold(true);
  UniqueFd waiting = connect_loopback(socks_port_);
  send_all(waiting.get(), std::string("\x05\x01\x00\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x50", 13));
  ASSERT_TRUE(decider_->wait_pending(1));

  std::mutex mutex;
  std::condition_variable cv;
  bool closed = false;
  attachment_->close([&] {
    std::lock_guard lock(mutex);
    closed = true;
    cv.notify_all();
  });
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return closed; }));
  }
  EXPECT_EQ(read_to_end(tunnel.get()), "");
  EXPECT_EQ(read_to_end(waiting.get()), std::string("\x05\x00", 2));  // the method answer, then closed
  EXPECT_FALSE(connect_loopback(http_port_).valid());
  EXPECT_FALSE(connect_loopback(socks_port_).valid());
  auto records = audit_.wait_for(2);
  ASSERT_EQ(records.size(), 2u);
  // The tunnel was cut; the connection still waiting for its decision withdrew it, so that no
  // reviewer is left with a question nobody waits for.
  std::vector<std::string> errors{records[0].error, records[1].error};
  std::sort(errors.begin(), errors.end());
  EXPECT_EQ(errors, (std::vector<std::string>{"the command ended while the decision was pending (the proxy attachment was closed)",
                                              "the proxy attachment was closed"}));
  EXPECT_EQ(decider_->withdrawn(), 1u);
}

TEST_F(ProxyLifecycleTest, ConnectionsOverTheCapGet503) {
  decider_->hold(true);
  std::vector<UniqueFd> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(connect_loopback(http_port_));
    send_all(held.back().get(), get_line());
  }
  ASSERT_TRUE(decider_->wait_pending(3));
  UniqueFd over = connect_loopback(http_port_);
  std::string response = read_to_end(over.get());
  EXPECT_THAT(response, StartsWith("HTTP/1.1 503"));
  EXPECT_THAT(response, HasSubstr("connection limit reached (3 at once for this command)"));
  EXPECT_EQ(service_->counters().active_connections, 3u);
  decider_->release();
  for (auto& fd : held) EXPECT_THAT(read_to_end(fd.get()), HasSubstr("origin saw GET /late"));
}

class ProxyIdleTest : public ProxyFixture {
 protected:
  ProxyOptions options() const override {
    ProxyOptions options;
    options.idle_timeout_ms = 200;
    return options;
  }
};

TEST_F(ProxyIdleTest, SilentTunnelIsClosedAfterTheIdleTimeout) {
  auto echo = make_echo_server();
  UniqueFd tunnel = connect_loopback(http_port_);
  send_all(tunnel.get(), "CONNECT 127.0.0.1:" + std::to_string(echo->port()) + " HTTP/1.1\r\n\r\n");
  ASSERT_THAT(read_until(tunnel.get(), "\r\n\r\n"), StartsWith("HTTP/1.1 200"));
  send_all(tunnel.get(), "one");
  EXPECT_EQ(read_exactly(tunnel.get(), 3), "one");
  EXPECT_EQ(read_to_end(tunnel.get()), "");  // then silence: closed by the proxy
  auto records = audit_.wait_for(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].error, "idle for 200 ms");
  EXPECT_EQ(records[0].bytes_up, 3u);
  EXPECT_EQ(records[0].bytes_down, 3u);
}

}  // namespace
}  // namespace codexd::network::testing
