#include "daemon/exec/yield_clamps.h"

#include <gtest/gtest.h>

namespace codexd::exec {
namespace {

TEST(YieldClamps, Exec) {
  EXPECT_EQ(clamp_exec_yield_ms(std::nullopt), 10000u);
  EXPECT_EQ(clamp_exec_yield_ms(0), 250u);
  EXPECT_EQ(clamp_exec_yield_ms(249), 250u);
  EXPECT_EQ(clamp_exec_yield_ms(1234), 1234u);
  EXPECT_EQ(clamp_exec_yield_ms(30001), 30000u);
  EXPECT_EQ(clamp_exec_yield_ms(UINT32_MAX), 30000u);
}

TEST(YieldClamps, WriteWithChars) {
  EXPECT_EQ(clamp_write_yield_ms(std::nullopt, false), 250u);
  EXPECT_EQ(clamp_write_yield_ms(10, false), 250u);
  EXPECT_EQ(clamp_write_yield_ms(5000, false), 5000u);
  EXPECT_EQ(clamp_write_yield_ms(40000, false), 30000u);
}

TEST(YieldClamps, EmptyWriteIsAPoll) {
  EXPECT_EQ(clamp_write_yield_ms(std::nullopt, true), 5000u);  // the default 250 becomes 5000
  EXPECT_EQ(clamp_write_yield_ms(6000, true), 6000u);
  EXPECT_EQ(clamp_write_yield_ms(400000, true), 300000u);
  EXPECT_EQ(clamp_write_yield_ms(400000, true, 60000), 60000u);
  EXPECT_EQ(clamp_write_yield_ms(400000, true, 1000), 5000u);  // the ceiling is floored at 5000
}

TEST(YieldClamps, Poll) {
  EXPECT_EQ(clamp_poll_yield_ms(0), 0u);
  EXPECT_EQ(clamp_poll_yield_ms(100), 100u);
  EXPECT_EQ(clamp_poll_yield_ms(999999), 300000u);
}

}  // namespace
}  // namespace codexd::exec
