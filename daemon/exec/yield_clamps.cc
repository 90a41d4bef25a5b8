#include "daemon/exec/yield_clamps.h"

#include <algorithm>

namespace codexd::exec {

uint32_t clamp_exec_yield_ms(std::optional<uint32_t> requested) {
  return std::clamp(requested.value_or(kDefaultExecYieldMs), kMinYieldMs, kMaxYieldMs);
}

uint32_t clamp_write_yield_ms(std::optional<uint32_t> requested, bool empty_chars, uint32_t max_poll_ms) {
  uint32_t t = std::max(requested.value_or(kDefaultWriteYieldMs), kMinYieldMs);
  if (empty_chars) return std::clamp(t, kMinEmptyPollYieldMs, std::max(max_poll_ms, kMinEmptyPollYieldMs));
  return std::min(t, kMaxYieldMs);
}

uint32_t clamp_poll_yield_ms(uint32_t requested, uint32_t max_poll_ms) {
  return std::min(requested, std::max(max_poll_ms, kMinEmptyPollYieldMs));
}

}  // namespace codexd::exec
