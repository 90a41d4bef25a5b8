// Before a restart in place: everything the new daemon will read is checked by the running
// one, so a typo in codexd.toml or a rules file refuses the restart (and the running daemon
// goes on serving) instead of leaving a daemon that cannot start.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "daemon/config/config.h"

namespace codexd::server {

// What a restart execs: the binary on disk (its path taken at start-up) and this daemon's argv.
struct RestartCommand {
  std::string executable;         // "" when unknown: restarting in place is refused
  std::vector<std::string> argv;  // with the command-line overrides, so they apply again
};

struct RestartCheckInput {
  RestartCommand command;
  std::string config_path;                // "" when the daemon runs on its built-in defaults
  const config::Config* running = nullptr;  // mode, rules directories without a config file
  std::string default_rules;              // the shipped default.rules, "" if not loaded
  size_t live_sessions = 0;               // would be orphaned if the new config has no durable sessions
};

// Ok, or FailedPrecondition "restart refused, the daemon keeps running: E1; E2; ..." with every
// problem found (file:line:col for config and rules errors). Reads files: not on the core thread.
Status check_restart(const RestartCheckInput& input);

}  // namespace codexd::server
