#include "daemon/exec/environment.h"

#include <algorithm>
#include <array>
#include <cctype>

extern char** environ;

namespace codexd::exec {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool equals_ci(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

bool matches_any(const std::vector<std::string>& patterns, std::string_view name) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return wildcard_match_ci(p, name); });
}

constexpr std::array<std::string_view, 11> kCoreVariables = {
    "PATH", "SHELL", "TMPDIR", "TEMP", "TMP", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "LOGNAME", "USER"};

// Codex's unified-exec overlay (UNIFIED_EXEC_ENV): forced over whatever was inherited.
const std::array<std::pair<std::string_view, std::string_view>, 10> kUnifiedExecOverlay = {{
    {"NO_COLOR", "1"},
    {"TERM", "dumb"},
    {"LANG", "C.UTF-8"},
    {"LC_CTYPE", "C.UTF-8"},
    {"LC_ALL", "C.UTF-8"},
    {"COLORTERM", ""},
    {"PAGER", "cat"},
    {"GIT_PAGER", "cat"},
    {"GH_PAGER", "cat"},
    {"CODEX_CI", "1"},
}};

}  // namespace

bool wildcard_match_ci(std::string_view pattern, std::string_view name) {
  // Iterative glob with single-star backtracking: linear in practice, no recursion.
  size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || lower(pattern[p]) == lower(name[n]))) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

EnvMap current_process_environment() {
  EnvMap env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

bool is_always_stripped(std::string_view name) {
  static constexpr std::array<std::string_view, 5> kLaunchTokens = {
      "CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN", "NODE_REPL_AUTH_TOKEN", "OPENAI_FEDERATION_RULE_ID",
      "OPENAI_IDENTITY_TOKEN_FILE", "OPENAI_WORKLOAD_IDENTITY_CONTEXT"};
  // The daemon's own service-manager handles: a command must not notify or claim sockets on
  // codexd's behalf.
  static constexpr std::array<std::string_view, 6> kServiceManager = {
      "NOTIFY_SOCKET", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES", "WATCHDOG_PID", "WATCHDOG_USEC"};
  for (auto token : kLaunchTokens) {
    if (equals_ci(token, name)) return true;
  }
  for (auto variable : kServiceManager) {
    if (variable == name) return true;
  }
  return false;
}

std::vector<std::string> build_child_environment(const EnvironmentPolicy& policy, const EnvironmentInputs& inputs) {
  EnvMap env;
  switch (policy.inherit) {
    case EnvironmentPolicy::Inherit::kAll: env = inputs.base; break;
    case EnvironmentPolicy::Inherit::kCore:
      for (auto name : kCoreVariables) {
        auto it = inputs.base.find(std::string(name));
        if (it != inputs.base.end()) env.insert(*it);
      }
      break;
    case EnvironmentPolicy::Inherit::kNone: break;
  }
  for (const auto& [k, v] : inputs.request) env[k] = v;

  auto erase_if = [&env](auto predicate) {
    for (auto it = env.begin(); it != env.end();) {
      it = predicate(it->first) ? env.erase(it) : std::next(it);
    }
  };
  if (!policy.ignore_default_excludes) {
    static const std::vector<std::string> kDefaultExcludes = {"*KEY*", "*SECRET*", "*TOKEN*"};
    erase_if([](const std::string& name) { return matches_any(kDefaultExcludes, name); });
  }
  if (!policy.exclude.empty()) erase_if([&](const std::string& name) { return matches_any(policy.exclude, name); });
  for (const auto& [k, v] : policy.set) env[k] = v;
  if (!policy.include_only.empty()) {
    erase_if([&](const std::string& name) { return !matches_any(policy.include_only, name); });
  }
  erase_if([](const std::string& name) { return is_always_stripped(name); });
  for (const auto& [k, v] : inputs.forced) env[k] = v;
  if (inputs.unified_exec) {
    // Over what was inherited, not over what the caller asked for by name: Codex's model
    // cannot pass an environment, so only a person or a client that means it (codexctl exec
    // --tty passing its TERM) ever sets one of these.
    for (const auto& [k, v] : kUnifiedExecOverlay) {
      const std::string name(k);
      if (inputs.request.count(name) && env.count(name)) continue;
      env[name] = std::string(v);
    }
  }

  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

}  // namespace codexd::exec
