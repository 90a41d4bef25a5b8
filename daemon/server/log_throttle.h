// At most one line a second for what a flood (of connections, of malformed requests) would
// otherwise log each time; the next line says how many were left out. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <utility>

#include <spdlog/spdlog.h>

namespace codexd::server {

class LogThrottle {
 public:
  explicit LogThrottle(spdlog::level::level_enum level = spdlog::level::warn) : level_(level) {}

  template <typename... Args>
  void log(fmt::format_string<Args...> format, Args&&... args) {
    if (!spdlog::should_log(level_)) return;
    size_t left_out = 0;
    {
      std::lock_guard lock(mutex_);
      auto now = std::chrono::steady_clock::now();
      if (now < next_) {
        ++suppressed_;
        return;
      }
      next_ = now + std::chrono::seconds(1);
      left_out = std::exchange(suppressed_, 0);
    }
    if (left_out > 0) spdlog::log(level_, "({} similar lines left out in the last second)", left_out);
    spdlog::log(level_, format, std::forward<Args>(args)...);
  }
  template <typename... Args>
  void warn(fmt::format_string<Args...> format, Args&&... args) {
    log(format, std::forward<Args>(args)...);
  }

 private:
  spdlog::level::level_enum level_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point next_{};
  size_t suppressed_ = 0;
};

}  // namespace codexd::server
