// The sandbox's one handover message: what the helper sends is what the daemon reads, and
// anything else (it crosses from the sandbox's side) is refused whole.
#include <gtest/gtest.h>

#include "platform/sandbox/sandbox_handover.h"

namespace codexd::sandbox {
namespace {

TEST(SandboxHandover, EveryCombinationRoundTrips) {
  for (bool proxy : {false, true}) {
    for (bool listener : {false, true}) {
      SandboxHandover handover;
      if (proxy) handover.proxy = ProxyPorts{3128, 1080};
      handover.exec_relay = listener;
      Result<SandboxHandover> parsed = parse_handover(encode_handover(handover));
      ASSERT_TRUE(parsed.ok()) << encode_handover(handover) << ": " << parsed.status().message();
      EXPECT_EQ(parsed->proxy.has_value(), proxy);
      if (proxy) {
        EXPECT_EQ(parsed->proxy->socks, 1080);
      }
      EXPECT_EQ(parsed->exec_relay, listener);
      EXPECT_EQ(parsed->descriptor_count(), (proxy ? 2u : 0u) + (listener ? 1u : 0u));
    }
  }
  EXPECT_EQ(encode_handover({ProxyPorts{3128, 1080}, true}), "codexd-sandbox/1 http=3128 socks=1080 exec-relay");
}

TEST(SandboxHandover, AnOlderHelpersProxyMessageIsStillUnderstood) {
  Result<SandboxHandover> parsed = parse_handover("codexd-proxy/1 http=40000 socks=40001");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->proxy->http, 40000);
  EXPECT_FALSE(parsed->exec_relay);
  EXPECT_EQ(encode_proxy_message({3128, 1080}), "codexd-proxy/1 http=3128 socks=1080");
}

TEST(SandboxHandover, AnythingElseIsRefused) {
  for (const char* bad : {"", "hello", "codexd-sandbox/2", "codexd-sandbox/1 http=3128", "codexd-sandbox/1 socks=1 http=2",
                          "codexd-sandbox/1 http=0 socks=1", "codexd-sandbox/1 http=70000 socks=1",
                          "codexd-sandbox/1 http=12x socks=1", "codexd-sandbox/1 exec-relay exec-relay",
                          "codexd-sandbox/1 exec-relay http=1 socks=2", "codexd-proxy/1", "codexd-proxy/1 exec-relay",
                          "codexd-proxy/1 http=1 socks=2 exec-relay", "codexd-sandbox/1 extra"}) {
    EXPECT_FALSE(parse_handover(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace codexd::sandbox
