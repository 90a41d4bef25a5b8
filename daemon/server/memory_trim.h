// Gives memory freed after a burst back to the system. glibc keeps what a peak of sessions,
// approvals or connections allocated in its arenas after it is freed (RSS stays at the peak);
// malloc_trim(0) returns the free pages of every arena. A timer on the core thread looks every
// few seconds at how much the allocator holds free (mallinfo2) and at the RSS, and trims only
// when a lot is free and the RSS or the free bytes grew by 16 MiB since the last trim: at most once per period,
// nothing at all while the daemon is idle at its usual size. Without glibc it does nothing.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>

namespace codexd::server {

class MemoryTrimmer {
 public:
  static constexpr std::chrono::seconds kPeriod{5};
  static constexpr uint64_t kMinFreeBytes = 16 << 20;  // held free by the allocator
  static constexpr uint64_t kMinGrowthBytes = 16 << 20;  // RSS above what the last trim left

  explicit MemoryTrimmer(boost::asio::io_context& io) : timer_(io) {}
  // Starts the timer (on the core thread from then on).
  void start();
  // Core thread.
  void stop() { stopped_ = true; timer_.cancel(); }

 private:
  void arm();
  void check();

  boost::asio::steady_timer timer_;
  bool stopped_ = false;
  uint64_t rss_after_trim_ = 0;
  uint64_t free_after_trim_ = 0;  // the allocator's free bytes after the last trim (or since reused)
};

// The process's resident set size in bytes (0 if unknown).
uint64_t resident_bytes();

}  // namespace codexd::server
