// Lexical path handling: pure string operations on absolute paths, no filesystem access and
// no symlink resolution (platform/sandbox/path_utils.h adds the filesystem-aware ones).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace codexd {

// Rejects what can never be a path we act on: empty, relative, holding a NUL byte, too long.
Status validate_absolute_path(std::string_view path, std::string_view what);

// "/a//b/./c/../d/" -> "/a/b/d": empty and "." components dropped, ".." drops the previous
// component ("/.." stays "/"), no trailing "/".
std::string normalize_lexically(std::string_view absolute_path);

// True when `path` is `base` or lies below it (both normalized, absolute).
bool is_same_or_under(std::string_view path, std::string_view base);

// Number of components: "/" -> 0, "/a/b" -> 2. Used to order mounts by specificity.
int path_depth(std::string_view normalized_path);

// "/a/b" + "c" -> "/a/b/c"; "/" + "c" -> "/c".
std::string join_path(std::string_view dir, std::string_view name);

// Parent directory of a normalized absolute path ("/a/b" -> "/a", "/a" -> "/").
std::string parent_path(std::string_view normalized_path);

// Last component of a normalized absolute path; nullopt for "/".
std::optional<std::string> path_basename(std::string_view normalized_path);

}  // namespace codexd
