#include "daemon/server/protobuf_log.h"

#include <google/protobuf/stubs/logging.h>
#include <grpc/support/log.h>

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

void grpc_to_spdlog(gpr_log_func_args* args) {
  if (args->severity == GPR_LOG_SEVERITY_ERROR) {
    static LogThrottle errors(spdlog::level::warn);
    errors.log("grpc {}:{}: {}", args->file, args->line, args->message);
    return;
  }
  static LogThrottle others(spdlog::level::debug);
  others.log("grpc {}:{}: {}", args->file, args->line, args->message);
}

}  // namespace

void route_protobuf_log_to_spdlog() { google::protobuf::SetLogHandler(&to_spdlog); }

void route_grpc_log_to_spdlog() { gpr_set_log_function(&grpc_to_spdlog); }

}  // namespace codexd::server
