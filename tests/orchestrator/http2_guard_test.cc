// The frame-level guard of daemon/server/http2_guard.h on byte streams built here: limits,
// the frame sequences it refuses, and the same answer however the bytes are split.
#include "daemon/server/http2_guard.h"

#include <gtest/gtest.h>

#include <string>

namespace codexd::server {
namespace {

const std::string kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
constexpr uint8_t kData = 0x0, kHeaders = 0x1, kPushPromise = 0x5, kPing = 0x6, kContinuation = 0x9;
constexpr uint8_t kEndHeaders = 0x4;

std::string frame(uint8_t type, uint8_t flags, uint32_t stream, size_t length) {
  std::string f{static_cast<char>(length >> 16), static_cast<char>(length >> 8), static_cast<char>(length),
                static_cast<char>(type), static_cast<char>(flags)};
  for (int shift = 24; shift >= 0; shift -= 8) f.push_back(static_cast<char>((stream >> shift) & 0xff));
  return f + std::string(length, 'x');
}

std::string feed_whole(const std::string& bytes, Http2GuardLimits limits = {}) {
  Http2HeaderGuard guard(limits);
  return guard.feed(bytes);
}

// The same bytes a byte at a time: frame headers and payloads split anywhere.
std::string feed_bytewise(const std::string& bytes, Http2GuardLimits limits = {}) {
  Http2HeaderGuard guard(limits);
  for (char c : bytes) {
    if (!guard.feed({&c, 1}).empty()) break;
  }
  return guard.refusal();
}

TEST(Http2HeaderGuard, OrdinaryTrafficPasses) {
  std::string s = kPreface + frame(0x4, 0, 0, 0) + frame(kHeaders, kEndHeaders, 1, 200) + frame(kData, 1, 1, 70000) +
                  frame(kHeaders, 0, 3, 16384) + frame(kContinuation, 0, 3, 16384) +
                  frame(kContinuation, kEndHeaders, 3, 100) + frame(kPing, 0, 0, 8) + frame(kData, 0, 3, 5);
  EXPECT_EQ(feed_whole(s), "");
  EXPECT_EQ(feed_bytewise(s), "");
}

TEST(Http2HeaderGuard, AHeaderBlockOverTheByteLimitIsRefusedWhereverTheBytesSplit) {
  Http2GuardLimits limits;
  limits.max_header_block_bytes = 1000;
  std::string s = kPreface + frame(kHeaders, 0, 1, 600) + frame(kContinuation, 0, 1, 300);
  EXPECT_EQ(feed_whole(s, limits), "");
  s += frame(kContinuation, kEndHeaders, 1, 101);
  EXPECT_NE(feed_whole(s, limits).find("header block over 1000 bytes on stream 1"), std::string::npos);
  EXPECT_EQ(feed_bytewise(s, limits), feed_whole(s, limits));
  // One HEADERS frame alone can be over it too; exactly at the limit is fine.
  EXPECT_NE(feed_whole(kPreface + frame(kHeaders, kEndHeaders, 1, 1001), limits), "");
  EXPECT_EQ(feed_whole(kPreface + frame(kHeaders, kEndHeaders, 1, 1000), limits), "");
}

TEST(Http2HeaderGuard, TheLimitIsPerBlockNotPerConnection) {
  Http2GuardLimits limits;
  limits.max_header_block_bytes = 1000;
  std::string s = kPreface;
  for (uint32_t stream = 1; stream < 200; stream += 2) s += frame(kHeaders, 0, stream, 900) + frame(kContinuation, kEndHeaders, stream, 100);
  EXPECT_EQ(feed_whole(s, limits), "");
}

TEST(Http2HeaderGuard, EmptyContinuationFramesCountAgainstTheFrameLimit) {
  Http2GuardLimits limits;
  limits.max_header_block_frames = 4;
  std::string s = kPreface + frame(kHeaders, 0, 1, 10);
  for (int i = 0; i < 3; ++i) s += frame(kContinuation, 0, 1, 0);
  EXPECT_EQ(feed_whole(s, limits), "");
  s += frame(kContinuation, 0, 1, 0);
  EXPECT_NE(feed_whole(s, limits).find("more than 4 frames"), std::string::npos);
}

TEST(Http2HeaderGuard, FrameSequencesHttp2ForbidsAreRefused) {
  // Another frame (even on the same stream) inside an unfinished block.
  EXPECT_NE(feed_whole(kPreface + frame(kHeaders, 0, 1, 10) + frame(kData, 0, 1, 5)), "");
  EXPECT_NE(feed_whole(kPreface + frame(kHeaders, 0, 1, 10) + frame(kPing, 0, 0, 8)), "");
  // CONTINUATION of another stream, or with no block open.
  EXPECT_NE(feed_whole(kPreface + frame(kHeaders, 0, 1, 10) + frame(kContinuation, kEndHeaders, 3, 5)), "");
  EXPECT_NE(feed_whole(kPreface + frame(kContinuation, kEndHeaders, 1, 5)), "");
  EXPECT_NE(feed_whole(kPreface + frame(kHeaders, kEndHeaders, 1, 5) + frame(kContinuation, kEndHeaders, 1, 5)), "");
  // A client never sends PUSH_PROMISE.
  EXPECT_NE(feed_whole(kPreface + frame(kPushPromise, kEndHeaders, 1, 8)).find("PUSH_PROMISE"), std::string::npos);
}

TEST(Http2HeaderGuard, ARefusalStands) {
  Http2HeaderGuard guard;
  const std::string bad = kPreface + frame(kContinuation, kEndHeaders, 1, 0);
  const std::string why = guard.feed(bad);
  ASSERT_NE(why, "");
  const std::string fine = frame(kPing, 0, 0, 8);
  EXPECT_EQ(guard.feed(fine), why);
}

}  // namespace
}  // namespace codexd::server
