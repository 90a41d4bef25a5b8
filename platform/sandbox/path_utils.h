// Lexical path helpers shared by spec resolution and the backends. They never touch the
// filesystem except where the name says so (canonicalize_existing).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "platform/base/status.h"

namespace codexd::sandbox {

// Rejects what can never be a sandbox path: empty, relative, or holding a NUL byte.
Status validate_absolute_path(std::string_view path, std::string_view what);

// "/a//b/./c/../d/" -> "/a/b/d". Purely lexical ("..": drop the previous component).
std::string normalize_lexically(std::string_view absolute_path);

// True when `path` is `base` or lies below it (both normalized, absolute).
bool is_same_or_under(std::string_view path, std::string_view base);

// Number of components: "/" -> 0, "/a/b" -> 2. Used to order mounts by specificity.
int path_depth(std::string_view normalized_path);

// "/a/b" + "c" -> "/a/b/c"; "/" + "c" -> "/c".
std::string join_path(std::string_view dir, std::string_view name);

// Parent directory of a normalized absolute path ("/a/b" -> "/a", "/a" -> "/").
std::string parent_path(std::string_view normalized_path);

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
