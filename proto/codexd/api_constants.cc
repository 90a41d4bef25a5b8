#include "codexd/api_constants.h"

#include <unistd.h>

#include <cstdlib>

namespace codexd::api {

std::string default_user_socket_path() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  if (runtime && runtime[0] == '/') return std::string(runtime) + "/codexd/codexd.sock";
  return "/tmp/codexd-" + std::to_string(::getuid()) + "/codexd.sock";
}

std::string default_socket_path(bool system_mode) {
  return system_mode ? kSystemSocketPath : default_user_socket_path();
}

}  // namespace codexd::api
