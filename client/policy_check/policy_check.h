// `codexctl policy check`: argument parsing compatible with `codex execpolicy check`, and the
// offline evaluation used when --rules is given (no daemon needed).
#pragma once

#include <string>
#include <variant>
#include <vector>

namespace codexd::client {

struct PolicyCheckArgs {
  std::vector<std::string> rules;  // --rules/-r, in order; empty: ask the daemon
  bool resolve_host_executables = false;
  bool pretty = false;
  std::vector<std::string> command;  // at least one token
};

// Parses the arguments after "policy check" the way Codex's clap definition does (a leading
// "--" is consumed; after the first command token everything belongs to the command; before
// it, a known option is an option and an unknown one starts the command). A missing --rules is
// not an error here (the daemon is asked). On a usage error prints clap-style text to stderr
// and returns the exit code (2); `--help` prints help and returns 0.
std::variant<PolicyCheckArgs, int> parse_policy_check_args(const std::vector<std::string>& args);

// Loads args.rules and prints what `codex execpolicy check` prints: the JSON on stdout
// (compact, or pretty with --pretty) and exit 0; or Codex's error report on stderr and exit 1.
int run_offline_policy_check(const PolicyCheckArgs& args);

}  // namespace codexd::client
