#include "daemon/server/protobuf_log.h"

#include <google/protobuf/stubs/logging.h>

#include <string>

#include "daemon/server/log_throttle.h"

namespace codexd::server {
namespace {

void to_spdlog(google::protobuf::LogLevel level, const char* filename, int line, const std::string& message) {
  if (level == google::protobuf::LOGLEVEL_FATAL) {
    spdlog::critical("libprotobuf {}:{}: {}", filename, line, message);
    return;
  }
  static LogThrottle throttle(spdlog::level::debug);
  throttle.log("libprotobuf {}:{}: {}", filename, line, message);
}

}  // namespace

void route_protobuf_log_to_spdlog() { google::protobuf::SetLogHandler(&to_spdlog); }

}  // namespace codexd::server
