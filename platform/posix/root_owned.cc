#include "platform/posix/root_owned.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include "base/lexical_path.h"

namespace codexd::posix {
namespace {

std::string named(std::string_view what, const std::string& path) {
  return what.empty() ? path : std::string(what) + " " + path;
}

// `depth`: 0 for the file itself, 1 for its directory, 2 and more above.
Status check_entry(const std::string& entry, int depth, const std::string& shown, uid_t also_trusted_owner) {
  struct stat st {};
  if (::stat(entry.c_str(), &st) != 0) return ErrnoStatus("stat " + entry, errno);
  bool trusted_owner = st.st_uid == 0 || (also_trusted_owner != 0 && st.st_uid == also_trusted_owner);
  bool sticky_above = depth >= 2 && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0;
  bool writable_by_others = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && !sticky_above;
  if (trusted_owner && !writable_by_others) return Status::Ok();
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  std::string who = also_trusted_owner != 0 ? "root and uid " + std::to_string(also_trusted_owner) : "root";
  return PermissionDenied((depth == 0 ? shown : "directory " + entry + " of " + shown) +
                          ": writable by someone other than " + who + " (owner uid " +
                          std::to_string(st.st_uid) + ", mode " + mode + ")");
}

Result<std::string> canonical(const std::string& path, std::string_view what) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) != nullptr) return std::string(buf);
  if (errno == ENOENT || errno == ENOTDIR) return NotFound(named(what, path) + " does not exist");
  return ErrnoStatus("realpath " + path, errno);
}

}  // namespace

Result<std::string> check_root_owned(const std::string& path, std::string_view what, uid_t also_trusted_owner) {
  CODEXD_ASSIGN_OR_RETURN(std::string real, canonical(path, what));
  const std::string shown = named(what, path);
  CODEXD_RETURN_IF_ERROR(check_entry(real, 0, shown, also_trusted_owner));
  int depth = 1;
  for (std::string dir = real; dir != "/"; ++depth) {
    dir = parent_path(dir);
    CODEXD_RETURN_IF_ERROR(check_entry(dir, depth, shown, also_trusted_owner));
  }
  return real;
}

Result<std::string> check_root_owned_executable(const std::string& path, std::string_view what,
                                                uid_t also_trusted_owner) {
  CODEXD_RETURN_IF_ERROR(validate_absolute_path(path, what.empty() ? "executable" : what));
  CODEXD_ASSIGN_OR_RETURN(std::string real, canonical(path, what));
  struct stat st {};
  if (::stat(real.c_str(), &st) != 0) return ErrnoStatus("stat " + real, errno);
  if (!S_ISREG(st.st_mode)) return PermissionDenied(real + " is not a regular file");
  if ((st.st_mode & S_IXUSR) == 0) return PermissionDenied(real + " is not executable");
  return check_root_owned(real, what, also_trusted_owner);
}

}  // namespace codexd::posix
