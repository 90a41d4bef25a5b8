// The child's environment: Codex's shell-environment policy (reference §7), then the
// caller's variables, then the unified-exec overlay. Children never inherit the daemon's
// environment implicitly: spawn gets exactly the list built here.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace codexd::exec {

using EnvMap = std::map<std::string, std::string>;

struct EnvironmentPolicy {
  enum class Inherit { kAll, kCore, kNone };
  Inherit inherit = Inherit::kAll;
  // false: drop names matching *KEY*, *SECRET*, *TOKEN* (case-insensitive). codexd keeps this
  // filter on by default (Codex defaults it off).
  bool ignore_default_excludes = false;
  std::vector<std::string> exclude;       // case-insensitive wildcards (* and ?)
  std::map<std::string, std::string> set;  // forced values
  std::vector<std::string> include_only;  // if non-empty, only matching names survive
};

// Case-insensitive wildcard match with * and ? (Codex's WildMatchPattern).
bool wildcard_match_ci(std::string_view pattern, std::string_view name);

// The daemon's own environment as a map (NAME=VALUE entries of `environ`).
EnvMap current_process_environment();

struct EnvironmentInputs {
  EnvMap base;            // what "inherit" starts from (the daemon's env, or the user's in system mode)
  EnvMap request;         // the caller's `env` map; subject to the same filters
  bool unified_exec = true;  // apply the NO_COLOR/TERM=dumb/... overlay (not over `request`'s own names)
  EnvMap forced;          // set last, after every filter (HOME/USER/LOGNAME of a dropped uid)
};

// Builds the sorted NAME=VALUE list.
std::vector<std::string> build_child_environment(const EnvironmentPolicy& policy, const EnvironmentInputs& inputs);

// Variables removed whatever the policy says: launch tokens that must not leak (Codex's list) and
// the daemon's service-manager handles (NOTIFY_SOCKET, LISTEN_*, WATCHDOG_*).
// Dynamic-loader variables (LD_PRELOAD, ...) may pass: unsandboxed they only affect the caller's
// own process, and the sandbox launcher applies them only after the sandbox is in place.
bool is_always_stripped(std::string_view name);

}  // namespace codexd::exec
