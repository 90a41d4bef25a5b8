#include "daemon/exec/output_ring.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

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

// Direct reads: bytes written into prepare()'s spans and committed read back as appended
// ones would, across growth and wraps, and the prepared slots never hold a retained byte.
TEST(OutputRing, PreparedSpansCommitLikeAppends) {
  OutputRing ring(10, 4);
  OutputRing reference(10);
  std::string all;
  for (int i = 0; i < 40; ++i) {
    const std::string retained_before = ring.read(ring.begin_offset(), 100);
    auto spans = ring.prepare(4);
    ASSERT_EQ(spans[0].size() + spans[1].size(), 4u);
    const size_t n = static_cast<size_t>(i % 5);  // 0 to 4 of the 4 prepared
    std::string chunk;
    for (size_t k = 0; k < n; ++k) chunk.push_back(static_cast<char>('a' + (i + k) % 26));
    // Scribble over the whole prepared space: none of it is retained yet.
    for (auto& part : spans) std::fill(part.begin(), part.end(), '#');
    EXPECT_EQ(ring.read(ring.begin_offset(), 100), retained_before) << "round " << i;
    size_t at = 0;
    for (auto& part : spans) {
      for (char& c : part) {
        if (at < n) c = chunk[at];
        ++at;
      }
    }
    ring.commit(n);
    reference.append(chunk);
    all += chunk;
    ASSERT_EQ(ring.end_offset(), all.size());
    ASSERT_EQ(ring.begin_offset(), reference.begin_offset());
    ASSERT_EQ(ring.read(ring.begin_offset(), 100), reference.read(reference.begin_offset(), 100)) << "round " << i;
  }
  EXPECT_LE(ring.allocated_bytes(), 14u);
}

TEST(OutputRing, SpansCoverTheWrap) {
  OutputRing ring(6, 2);  // 8 slots
  ring.append("0123456");
  ring.append("789");  // offsets 8 and 9 wrap to slots 0 and 1
  auto parts = ring.spans(5, 5);
  EXPECT_EQ(std::string(parts[0].data(), parts[0].size()) + std::string(parts[1].data(), parts[1].size()), "56789");
  EXPECT_EQ(parts[1].size(), 2u);
  EXPECT_EQ(ring.begin_offset(), 4u);
}

}  // namespace
}  // namespace codexd::exec
