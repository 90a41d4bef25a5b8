#include "daemon/network/target_parse.h"

#include <gtest/gtest.h>

namespace codexd::network {
namespace {

TEST(TargetParseTest, AuthorityForms) {
  auto plain = parse_authority("Example.COM.:443");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->host, "example.com");
  EXPECT_EQ(plain->port, 443);
  auto v6 = parse_authority("[2001:DB8::1]:8443");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "2001:db8::1");
  EXPECT_EQ(v6->port, 8443);
  EXPECT_EQ(parse_authority("example.com", 80)->port, 80);
  for (const char* bad : {"example.com", "example.com:", "example.com:0", "example.com:70000", "::1:80", "[::1",
                          "[fe80::1%eth0]:80", "exa mple.com:80", ":80", "a/b:80"}) {
    EXPECT_FALSE(parse_authority(bad).ok()) << bad;
  }
}

TEST(TargetParseTest, AbsoluteHttpUrls) {
  auto url = parse_http_url("HTTP://Host.example:8080/a/b?c=d#frag");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->authority.host, "host.example");
  EXPECT_EQ(url->authority.port, 8080);
  EXPECT_EQ(url->origin_form, "/a/b?c=d");
  EXPECT_EQ(parse_http_url("http://host")->origin_form, "/");
  EXPECT_EQ(parse_http_url("http://host?x=1")->origin_form, "/?x=1");
  EXPECT_EQ(parse_http_url("http://host")->authority.port, 80);
  EXPECT_EQ(parse_http_url("http://[::1]:81/")->authority.host, "::1");
  for (const char* bad : {"/origin-form", "https://host/", "http://user@host/", "http://allowed.com@evil.com/",
                          "ftp://host/", "http:///path"}) {
    EXPECT_FALSE(parse_http_url(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace codexd::network
