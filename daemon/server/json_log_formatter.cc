#include "daemon/server/json_log_formatter.h"

#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace codexd::server {
namespace {

// RFC 3339 with milliseconds and the local offset: 2026-12-07T02:55:00.123+01:00.
std::string rfc3339(spdlog::log_clock::time_point when) {
  const auto since_epoch = when.time_since_epoch();
  const time_t seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count();
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch).count() % 1000;
  tm local{};
  ::localtime_r(&seconds, &local);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &local);
  const long offset_minutes = local.tm_gmtoff / 60;
  const long magnitude = offset_minutes < 0 ? -offset_minutes : offset_minutes;
  char text[64];
  std::snprintf(text, sizeof text, "%s.%03lld%c%02ld:%02ld", date, static_cast<long long>(millis),
                offset_minutes < 0 ? '-' : '+', magnitude / 60, magnitude % 60);
  return text;
}

class JsonLogFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& message, spdlog::memory_buf_t& dest) override {
    nlohmann::ordered_json line;
    line["ts"] = rfc3339(message.time);
    const auto level = spdlog::level::to_string_view(message.level);
    line["level"] = std::string(level.data(), level.size());
    line["pid"] = pid_;
    line["msg"] = std::string(message.payload.data(), message.payload.size());
    // Invalid UTF-8 (a path, a peer's label) becomes U+FFFD rather than an exception.
    const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(text.data(), text.data() + text.size());
    dest.push_back('\n');
  }

  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<JsonLogFormatter>(); }

 private:
  const int pid_ = static_cast<int>(::getpid());
};

}  // namespace

std::unique_ptr<spdlog::formatter> make_json_log_formatter() { return std::make_unique<JsonLogFormatter>(); }

}  // namespace codexd::server
