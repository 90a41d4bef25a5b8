#include "daemon/exec/head_tail_buffer.h"

#include <gtest/gtest.h>

namespace codexd::exec {
namespace {

TEST(HeadTailBuffer, SplitsBudgetInHalves) {
  HeadTailBuffer b(10);
  EXPECT_EQ(b.head_budget(), 5u);
  EXPECT_EQ(b.tail_budget(), 5u);
  HeadTailBuffer odd(11);
  EXPECT_EQ(odd.head_budget(), 5u);
  EXPECT_EQ(odd.tail_budget(), 6u);
}

TEST(HeadTailBuffer, KeepsEverythingUnderBudget) {
  HeadTailBuffer b(10);
  b.push("abc");
  b.push("defg");
  EXPECT_EQ(b.retained_bytes(), 7u);
  EXPECT_EQ(b.omitted_bytes(), 0u);
  EXPECT_EQ(b.drain(), "abcdefg");
  EXPECT_TRUE(b.empty());
}

TEST(HeadTailBuffer, DropsTheMiddle) {
  HeadTailBuffer b(10);
  b.push("0123456789");
  b.push("abcdef");
  // head keeps 01234, tail keeps the last 5 bytes of "56789abcdef".
  EXPECT_EQ(b.omitted_bytes(), 6u);
  EXPECT_EQ(b.to_string_with_omission_marker(), "01234\n... 6 bytes omitted ...\nbcdef");
  EXPECT_EQ(b.drain(), "01234bcdef");
  EXPECT_EQ(b.omitted_bytes(), 0u);  // drain resets the count too
}

TEST(HeadTailBuffer, ChunkLargerThanTailReplacesIt) {
  HeadTailBuffer b(10);
  b.push("01234");   // fills the head
  b.push("ab");      // tail: ab
  b.push("vwxyzXYZ");  // >= tail budget: tail becomes its last 5 bytes
  EXPECT_EQ(b.omitted_bytes(), 2u + 3u);
  EXPECT_EQ(b.drain(), "01234yzXYZ");
}

TEST(HeadTailBuffer, ByteAtATimeKeepsNewestTail) {
  HeadTailBuffer b(4);
  for (char c : std::string("abcdefgh")) b.push(std::string(1, c));
  EXPECT_EQ(b.drain(), "abgh");
}

TEST(HeadTailBuffer, OneMebibyteDefault) {
  HeadTailBuffer b;
  std::string big(3 * 1024 * 1024, 'x');
  big.front() = 'F';
  big.back() = 'L';
  b.push(big);
  EXPECT_EQ(b.retained_bytes(), 1024u * 1024u);
  EXPECT_EQ(b.omitted_bytes(), 2u * 1024u * 1024u);
  std::string out = b.drain();
  EXPECT_EQ(out.front(), 'F');
  EXPECT_EQ(out.back(), 'L');
}

// The tail wraps in place; what comes out must be what a plain "keep the newest bytes" gives,
// whatever the chunk sizes, also across drains.
TEST(HeadTailBuffer, AWrappingTailMatchesTheNewestBytes) {
  HeadTailBuffer b(64);
  std::string stream;
  size_t drained_at = 0;
  for (int round = 0; round < 3; ++round) {
    for (size_t size : {1u, 7u, 31u, 32u, 5u, 40u, 13u, 2u, 29u}) {
      std::string chunk;
      for (size_t i = 0; i < size; ++i) chunk += static_cast<char>('a' + (stream.size() + i) % 26);
      stream += chunk;
      b.push(chunk);
    }
    const std::string since = stream.substr(drained_at);
    const std::string expected = since.substr(0, 32) + since.substr(since.size() - 32);
    EXPECT_EQ(b.omitted_bytes(), since.size() - 64);
    EXPECT_EQ(b.to_string_with_omission_marker(),
              since.substr(0, 32) + "\n... " + std::to_string(since.size() - 64) + " bytes omitted ...\n" +
                  since.substr(since.size() - 32));
    EXPECT_EQ(b.drain(), expected);
    drained_at = stream.size();
  }
}

TEST(HeadTailBuffer, PushHeadTakesOnlyWhatTheHeadHasRoomFor) {
  HeadTailBuffer b(8);  // head 4, tail 4
  EXPECT_EQ(b.push_head("ab"), 2u);
  EXPECT_EQ(b.push_head("cdef"), 2u);
  EXPECT_EQ(b.push_head("gh"), 0u);
  EXPECT_EQ(b.omitted_bytes(), 0u);
  EXPECT_EQ(b.drain(), "abcd");
  EXPECT_EQ(b.push_head("xyz"), 3u);
}

}  // namespace
}  // namespace codexd::exec
