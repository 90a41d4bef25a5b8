#include "base/lexical_path.h"

#include <climits>
#include <vector>

namespace codexd {

Status validate_absolute_path(std::string_view path, std::string_view what) {
  if (path.empty()) return InvalidArgument(std::string(what) + ": empty path");
  if (path.find('\0') != std::string_view::npos) {
    return InvalidArgument(std::string(what) + ": path holds a NUL byte");
  }
  if (path.front() != '/') {
    return InvalidArgument(std::string(what) + ": path must be absolute: " + std::string(path));
  }
  if (path.size() >= PATH_MAX) return InvalidArgument(std::string(what) + ": path too long");
  return Status::Ok();
}

std::string normalize_lexically(std::string_view absolute_path) {
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i < absolute_path.size()) {
    while (i < absolute_path.size() && absolute_path[i] == '/') ++i;
    size_t j = i;
    while (j < absolute_path.size() && absolute_path[j] != '/') ++j;
    std::string_view part = absolute_path.substr(i, j - i);
    if (part.empty() || part == ".") {
      // skip
    } else if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else {
      parts.push_back(part);
    }
    i = j;
  }
  if (parts.empty()) return "/";
  std::string out;
  for (std::string_view part : parts) {
    out += '/';
    out += part;
  }
  return out;
}

bool is_same_or_under(std::string_view path, std::string_view base) {
  if (base == "/") return !path.empty() && path.front() == '/';
  if (path.size() < base.size() || path.compare(0, base.size(), base) != 0) return false;
  return path.size() == base.size() || path[base.size()] == '/';
}

int path_depth(std::string_view normalized_path) {
  int depth = 0;
  for (char c : normalized_path) depth += (c == '/');
  return normalized_path == "/" ? 0 : depth;
}

std::string join_path(std::string_view dir, std::string_view name) {
  std::string out(dir);
  if (out.empty() || out.back() != '/') out += '/';
  out += name;
  return out;
}

std::string parent_path(std::string_view normalized_path) {
  size_t slash = normalized_path.rfind('/');
  if (slash == 0 || slash == std::string_view::npos) return "/";
  return std::string(normalized_path.substr(0, slash));
}

std::optional<std::string> path_basename(std::string_view normalized_path) {
  if (normalized_path == "/") return std::nullopt;
  size_t slash = normalized_path.rfind('/');
  return std::string(normalized_path.substr(slash + 1));
}

}  // namespace codexd
