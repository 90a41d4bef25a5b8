// The daemon as a whole: builds every part from the config, serves, and shuts down cleanly
// (stop accepting, kill every session's process group, reap, remove the socket).
#pragma once

#include <memory>
#include <string>

#include "daemon/config/config.h"
#include "base/status.h"

namespace codexd::server {

struct DaemonOptions {
  std::string config_path;       // for status; "" when running on defaults
  int inherited_listen_fd = -1;  // systemd socket activation
  std::string default_rules;     // shipped default.rules, loaded before the rules directories
  bool keep_sessions = false;    // --keep-sessions: a stop leaves durable sessions to the next daemon
};

class Daemon {
 public:
  static Result<std::unique_ptr<Daemon>> start(config::Config config, DaemonOptions options);
  ~Daemon();

  // Blocks until SIGTERM/SIGINT (or request_shutdown), then shuts down. Returns the exit code.
  int wait();
  void request_shutdown();

 private:
  struct Impl;
  explicit Daemon(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace codexd::server
