#include "platform/linux/trusted_executable.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "platform/sandbox/path_utils.h"

namespace codexd::sandbox::linux_backend {
namespace {

Status check_owner_and_mode(const std::string& path, const struct stat& st, uid_t also_trusted_owner) {
  if (st.st_uid != 0 && st.st_uid != also_trusted_owner) {
    return PermissionDenied(path + " is owned by uid " + std::to_string(st.st_uid));
  }
  bool writable_by_others = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  bool sticky_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0;
  if (writable_by_others && !sticky_dir) {
    return PermissionDenied(path + " is group- or world-writable");
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> verify_trusted_executable(const std::string& path, uid_t also_trusted_owner) {
  CODEXD_RETURN_IF_ERROR(validate_absolute_path(path, "executable"));
  CODEXD_ASSIGN_OR_RETURN(std::optional<std::string> canonical, canonicalize_existing(path));
  if (!canonical) return NotFound(path + " does not exist");
  struct stat st {};
  if (::stat(canonical->c_str(), &st) != 0) return ErrnoStatus("stat " + *canonical, errno);
  if (!S_ISREG(st.st_mode)) return PermissionDenied(*canonical + " is not a regular file");
  if ((st.st_mode & S_IXUSR) == 0) return PermissionDenied(*canonical + " is not executable");
  CODEXD_RETURN_IF_ERROR(check_owner_and_mode(*canonical, st, also_trusted_owner));
  for (std::string dir = parent_path(*canonical);; dir = parent_path(dir)) {
    if (::stat(dir.c_str(), &st) != 0) return ErrnoStatus("stat " + dir, errno);
    CODEXD_RETURN_IF_ERROR(check_owner_and_mode(dir, st, also_trusted_owner));
    if (dir == "/") break;
  }
  return *canonical;
}

Result<std::string> find_trusted_bwrap(const std::vector<std::string>& candidates,
                                       const std::string& forbidden_dir,
                                       std::vector<std::string>* warnings) {
  static const std::vector<std::string> kDefaults = {"/usr/bin/bwrap", "/usr/local/bin/bwrap",
                                                     "/bin/bwrap"};
  const std::vector<std::string>& list = candidates.empty() ? kDefaults : candidates;
  for (const std::string& candidate : list) {
    if (candidate.empty() || candidate.front() != '/') {
      warnings->push_back("ignored relative bwrap candidate '" + candidate + "'");
      continue;
    }
    if (::access(candidate.c_str(), F_OK) != 0) continue;
    Result<std::string> trusted = verify_trusted_executable(candidate, ::geteuid());
    if (!trusted.ok()) {
      warnings->push_back("untrusted bwrap ignored: " + trusted.status().message());
      continue;
    }
    if (!forbidden_dir.empty() && forbidden_dir != "/" && is_same_or_under(*trusted, forbidden_dir)) {
      warnings->push_back("bwrap inside the working directory ignored: " + *trusted);
      continue;
    }
    return *trusted;
  }
  return NotFound("bubblewrap (bwrap) not found in trusted locations");
}

}  // namespace codexd::sandbox::linux_backend
