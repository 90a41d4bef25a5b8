// Names the step a daemon's shutdown is in, and logs it when the shutdown takes long: a stop
// that hangs (a gRPC call that never finishes, a shim that does not answer) then says where,
// instead of only being SIGKILLed by systemd after TimeoutStopSec.
#pragma once

#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace codexd::server {

class ShutdownWatch {
 public:
  static constexpr std::chrono::seconds kReportEvery{10};

  // `details` (thread-safe) adds what the daemon still holds, e.g. its live streaming calls.
  explicit ShutdownWatch(std::function<std::string()> details = {})
      : details_(std::move(details)), thread_([this] { watch(); }) {}
  ~ShutdownWatch() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  ShutdownWatch(const ShutdownWatch&) = delete;
  ShutdownWatch& operator=(const ShutdownWatch&) = delete;

  // `name` must outlive the watch (a string literal).
  void step(const char* name) {
    std::lock_guard lock(mutex_);
    step_ = name;
    step_started_ = std::chrono::steady_clock::now();
  }

 private:
  void watch() {
    std::unique_lock lock(mutex_);
    const auto started = std::chrono::steady_clock::now();
    while (!wake_.wait_for(lock, kReportEvery, [this] { return done_; })) {
      const auto now = std::chrono::steady_clock::now();
      spdlog::warn("shutdown: {} s so far, {} s in step: {}{}",
                   std::chrono::duration_cast<std::chrono::seconds>(now - started).count(),
                   std::chrono::duration_cast<std::chrono::seconds>(now - step_started_).count(), step_,
                   details_ ? " (" + details_() + ")" : std::string());
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  const char* step_ = "starting";
  std::chrono::steady_clock::time_point step_started_ = std::chrono::steady_clock::now();
  std::function<std::string()> details_;
  std::thread thread_;  // last: it starts once the members it reads exist
};

}  // namespace codexd::server
