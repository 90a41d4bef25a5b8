#include "platform/sandbox/path_utils.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace codexd::sandbox {

Result<std::optional<std::string>> canonicalize_existing(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) != nullptr) return std::optional<std::string>(std::string(buf));
  if (errno == ENOENT || errno == ENOTDIR) return std::optional<std::string>();
  return ErrnoStatus("realpath " + path, errno);
}

std::optional<std::string> first_symlink_component(const std::string& path) {
  std::string prefix;
  size_t i = 1;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    prefix = path.substr(0, j);
    struct stat st {};
    if (::lstat(prefix.c_str(), &st) != 0) return std::nullopt;
    if (S_ISLNK(st.st_mode)) return prefix;
    i = j + 1;
  }
  return std::nullopt;
}

ExistingPrefix split_existing_prefix(const std::string& path) {
  std::string existing = "/";
  size_t i = 1;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j == i) break;
    std::string candidate = path.substr(0, j);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) != 0) return {existing, candidate};
    existing = candidate;
    i = j + 1;
  }
  return {existing, ""};
}

}  // namespace codexd::sandbox
