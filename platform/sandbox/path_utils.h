// Filesystem-aware path helpers for spec resolution and the backends (the purely lexical ones
// are in base/lexical_path.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/lexical_path.h"
#include "base/status.h"

namespace codexd::sandbox {

// realpath() for an existing path; nullopt when the path does not exist (any other error
// is reported).
Result<std::optional<std::string>> canonicalize_existing(const std::string& path);

// Whether any component of `path` (normalized, absolute) is a symlink, and the first one.
std::optional<std::string> first_symlink_component(const std::string& path);

// The longest prefix of `path` that exists (at least "/") and the first missing component
// (empty when the whole path exists). Symlinks are followed for the existing prefix.
struct ExistingPrefix {
  std::string existing;
  std::string first_missing;
};
ExistingPrefix split_existing_prefix(const std::string& path);

}  // namespace codexd::sandbox
