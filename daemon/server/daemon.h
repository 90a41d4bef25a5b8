// The daemon as a whole: builds every part from the config, serves, and shuts down cleanly
// (stop accepting, kill every session's process group, reap, remove the socket).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "base/unique_fd.h"
#include "daemon/config/config.h"
#include "daemon/server/restart_check.h"

namespace codexd::server {

struct DaemonOptions {
  std::string config_path;       // for status; "" when running on defaults
  int inherited_listen_fd = -1;  // systemd socket activation
  std::string default_rules;     // shipped default.rules, loaded before the rules directories
  bool keep_sessions = false;    // --keep-sessions: a stop leaves durable sessions to the next daemon
  // The inherited socket came from this daemon's own restart in place: it was created by a
  // daemon, not by systemd, so this one removes the file when it stops.
  bool inherited_socket_owned = false;
  RestartCommand restart;        // what a restart in place execs (RestartDaemon, SIGUSR2)
};

// What a daemon that stopped for a restart in place hands to the new image.
struct RestartHandover {
  UniqueFd listener;              // still listening: clients queue in its backlog meanwhile
  bool owns_socket_file = false;  // the new daemon removes the socket file when it stops
};

class Daemon {
 public:
  static Result<std::unique_ptr<Daemon>> start(config::Config config, DaemonOptions options);
  ~Daemon();

  // Blocks until SIGTERM/SIGINT (or request_shutdown), then shuts down. Returns the exit code.
  int wait();
  void request_shutdown();
  // After wait(): the listening socket to pass on when the stop was a restart in place
  // (RestartDaemon or SIGUSR2), nothing otherwise.
  std::optional<RestartHandover> take_restart_handover();

 private:
  struct Impl;
  explicit Daemon(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace codexd::server
