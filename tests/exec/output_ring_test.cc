#include "daemon/exec/output_ring.h"

#include <gtest/gtest.h>

namespace codexd::exec {
namespace {

TEST(OutputRing, AddressesBytesByStreamOffset) {
  OutputRing r(8);
  r.append("hello");
  EXPECT_EQ(r.begin_offset(), 0u);
  EXPECT_EQ(r.end_offset(), 5u);
  EXPECT_EQ(r.read(1, 3), "ell");
  r.append(" world");  // 11 bytes total, 8 retained
  EXPECT_EQ(r.begin_offset(), 3u);
  EXPECT_EQ(r.end_offset(), 11u);
  EXPECT_EQ(r.read(3, 100), "lo world");
  EXPECT_EQ(r.read(11, 100), "");
}

TEST(OutputRing, HugeAppendKeepsTheNewest) {
  OutputRing r(4);
  r.append("ab");
  r.append("0123456789");
  EXPECT_EQ(r.begin_offset(), 8u);
  EXPECT_EQ(r.read(8, 4), "6789");
  r.append("x");
  EXPECT_EQ(r.read(9, 4), "789x");
}

TEST(OutputRing, WrapsManyTimes) {
  OutputRing r(7);
  std::string all;
  for (int i = 0; i < 100; ++i) {
    std::string chunk(static_cast<size_t>(i % 5 + 1), static_cast<char>('a' + i % 26));
    r.append(chunk);
    all += chunk;
    ASSERT_EQ(r.end_offset(), all.size());
    uint64_t begin = r.begin_offset();
    ASSERT_EQ(r.read(begin, 100), all.substr(begin));
  }
}

TEST(OutputRing, MemoryFollowsTheOutput) {
  OutputRing r(1 << 20);
  EXPECT_EQ(r.allocated_bytes(), 0u) << "an idle session holds no replay buffer";
  r.append("hello");
  EXPECT_LE(r.allocated_bytes(), 4096u);
  std::string all = "hello";
  for (int i = 0; i < 3000; ++i) {  // grows past the capacity, then wraps
    std::string chunk(701, static_cast<char>('a' + i % 26));
    r.append(chunk);
    all += chunk;
    ASSERT_LE(r.allocated_bytes(), size_t{1} << 20);
    uint64_t begin = r.begin_offset();
    ASSERT_EQ(r.read(begin, all.size()), all.substr(begin)) << "after " << i << " chunks";
  }
  EXPECT_EQ(r.allocated_bytes(), size_t{1} << 20);
}

TEST(OutputRing, AnAppendThatCrossesTheEndOfGrowthWrapsCorrectly) {
  OutputRing r(10);
  r.append("0123456");
  r.append("789abcdef");  // 3 bytes fill it, 6 wrap
  EXPECT_EQ(r.begin_offset(), 6u);
  EXPECT_EQ(r.read(6, 100), "6789abcdef");
}

TEST(OutputRing, ReadIntoAndAppendToAgreeWithReadAcrossTheWrap) {
  OutputRing ring(10);
  ring.append("0123456789");
  ring.append("abcd");  // wraps: slots 0-3 hold abcd
  std::string reused = "previous contents";
  ring.read_into(6, 100, reused);
  EXPECT_EQ(reused, "6789abcd");
  EXPECT_EQ(reused, ring.read(6, 100));
  std::string out = "head:";
  ring.append_to(7, 5, out);
  EXPECT_EQ(out, "head:789ab");
  char buffer[4];
  ring.copy_to(9, 4, buffer);
  EXPECT_EQ(std::string(buffer, 4), "9abc");
}

}  // namespace
}  // namespace codexd::exec
