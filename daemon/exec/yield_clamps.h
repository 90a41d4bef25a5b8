// How long ExecCommand / WriteStdin / Poll wait, with Codex's clamps (unified_exec/mod.rs).
#pragma once

#include <cstdint>
#include <optional>

namespace codexd::exec {

inline constexpr uint32_t kMinYieldMs = 250;
inline constexpr uint32_t kMaxYieldMs = 30'000;
inline constexpr uint32_t kDefaultExecYieldMs = 10'000;
inline constexpr uint32_t kDefaultWriteYieldMs = 250;
inline constexpr uint32_t kMinEmptyPollYieldMs = 5'000;
inline constexpr uint32_t kDefaultMaxBackgroundPollMs = 300'000;

// exec_command: clamp(yield, 250, 30000), default 10000.
uint32_t clamp_exec_yield_ms(std::optional<uint32_t> requested);

// write_stdin: t = max(yield, 250) (default 250); empty chars: clamp(t, 5000, max_poll_ms)
// where max_poll_ms is floored at 5000; non-empty: min(t, 30000).
uint32_t clamp_write_yield_ms(std::optional<uint32_t> requested, bool empty_chars,
                              uint32_t max_poll_ms = kDefaultMaxBackgroundPollMs);

// Poll (our RPC): 0 returns at once; otherwise at most max_poll_ms.
uint32_t clamp_poll_yield_ms(uint32_t requested, uint32_t max_poll_ms = kDefaultMaxBackgroundPollMs);

}  // namespace codexd::exec
