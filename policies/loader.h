// Loading rules files into a Policy: evaluates each file with the prefix_rule /
// host_executable / network_rule builtins, then checks each call's match/not_match examples.
// All-or-nothing: either a new policy or every error.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policies/policy.h"

namespace codexd::policy {

struct LoadError {
  std::string path;          // as given
  std::string located;       // "file:line:col: message" (or "file: message" for read errors)
  std::string codex_report;  // Codex's stderr text: "Error: failed to parse policy at <path>\n\nCaused by:\n    ..."
};

struct LoadOptions {
  // Example validation resolves host executables against these (Codex uses the process's).
  std::string cwd;   // empty: the current directory
  std::string home;  // empty: $HOME
  // Codex stops at the first bad file. The daemon wants every error, so by default all files
  // are evaluated and every error is returned (a bad file contributes nothing).
  bool stop_at_first_error = false;
};

struct LoadResult {
  std::shared_ptr<const Policy> policy;  // null when errors is non-empty
  std::vector<LoadError> errors;
  bool ok() const { return errors.empty(); }
};

// Loads the files in order into one policy.
LoadResult load_policy_files(const std::vector<std::string>& paths, const LoadOptions& options = {});

// One source of rules: a file to read, or text already in memory (the built-in defaults),
// named `path` in messages.
struct PolicySource {
  std::string path;
  std::optional<std::string> text;
};
LoadResult load_policy_sources(const std::vector<PolicySource>& sources, const LoadOptions& options = {});

// Loads rules from in-memory text (path is used for messages only). For tests and tools.
LoadResult load_policy_text(const std::string& path, const std::string& text, const LoadOptions& options = {});

}  // namespace codexd::policy
