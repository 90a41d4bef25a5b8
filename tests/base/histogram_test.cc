#include "base/histogram.h"

#include <gtest/gtest.h>

namespace codexd {
namespace {

TEST(Histogram, CountsAreCumulativeAndAValueOnABoundCountsInThatBucket) {
  Histogram h({0.1, 1, 10});
  for (double v : {0.05, 0.1, 0.5, 1.0, 7.0, 100.0}) h.observe(v);
  EXPECT_EQ(h.cumulative(0), 2u);  // 0.05, 0.1 (le is "less or equal")
  EXPECT_EQ(h.cumulative(1), 4u);
  EXPECT_EQ(h.cumulative(2), 5u);
  EXPECT_EQ(h.cumulative(3), 6u);  // +Inf: all
  EXPECT_EQ(h.count(), 6u);
  EXPECT_DOUBLE_EQ(h.sum(), 108.65);
}

}  // namespace
}  // namespace codexd
