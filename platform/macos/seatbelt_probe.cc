#include "platform/macos/seatbelt_probe.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "platform/macos/seatbelt_paths.h"
#include "platform/sandbox/path_utils.h"

namespace codexd::sandbox::macos_backend {
namespace {

Status check_owner_and_mode(const std::string& path, const struct stat& st) {
  if (st.st_uid != 0) return PermissionDenied(path + " is owned by uid " + std::to_string(st.st_uid) + ", not root");
  bool sticky_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0;
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && !sticky_dir) {
    return PermissionDenied(path + " is writable by group or others");
  }
  return Status::Ok();
}

#ifdef __APPLE__
// The per-user cache directory (/var/folders/xx/yyyy/C/). In system mode this
// is the daemon's (root's) directory; the command's uid cannot write there anyway, so the
// rule it feeds is inert rather than wrong.
std::optional<std::string> darwin_user_cache_dir() {
  char buf[1024];
  size_t n = ::confstr(_CS_DARWIN_USER_CACHE_DIR, buf, sizeof buf);
  if (n == 0 || n > sizeof buf) return std::nullopt;
  Result<std::string> resolved = resolve_for_seatbelt(std::string(buf));
  if (!resolved.ok()) return std::nullopt;
  return *resolved;
}
#endif

}  // namespace

Result<std::string> check_trusted_sandbox_exec(const std::string& path) {
  CODEXD_RETURN_IF_ERROR(validate_absolute_path(path, "sandbox-exec"));
  CODEXD_ASSIGN_OR_RETURN(std::optional<std::string> canonical, canonicalize_existing(path));
  if (!canonical) return NotFound(path + " does not exist");
  struct stat st {};
  if (::stat(canonical->c_str(), &st) != 0) return ErrnoStatus("stat " + *canonical, errno);
  if (!S_ISREG(st.st_mode)) return PermissionDenied(*canonical + " is not a regular file");
  if ((st.st_mode & S_IXUSR) == 0) return PermissionDenied(*canonical + " is not executable");
  CODEXD_RETURN_IF_ERROR(check_owner_and_mode(*canonical, st));
  for (std::string dir = parent_path(*canonical);; dir = parent_path(dir)) {
    if (::stat(dir.c_str(), &st) != 0) return ErrnoStatus("stat " + dir, errno);
    CODEXD_RETURN_IF_ERROR(check_owner_and_mode(dir, st));
    if (dir == "/") break;
  }
  return *canonical;
}

SeatbeltProbe probe_seatbelt(const SandboxManagerOptions& options, const std::string& sandbox_exec) {
  SeatbeltProbe probe;
  probe.report.chosen = Backend::kNone;
#ifndef __APPLE__
  (void)options;
  (void)sandbox_exec;
  probe.report.warnings.push_back("the Seatbelt backend works only on macOS");
  return probe;
#else
  if (options.preference != BackendPreference::kAuto) {
    probe.report.warnings.push_back("sandbox backend '" + std::string(to_string(options.preference)) +
                                    "' does not exist on macOS; only auto (Seatbelt) does");
    return probe;
  }
  Result<std::string> trusted = check_trusted_sandbox_exec(sandbox_exec);
  if (!trusted.ok()) {
    probe.report.warnings.push_back("Seatbelt unusable: " + trusted.status().message());
    return probe;
  }
  probe.report.chosen = Backend::kMacosSeatbelt;
  probe.darwin_user_cache_dir = darwin_user_cache_dir();
  if (!probe.darwin_user_cache_dir) {
    probe.report.warnings.push_back("no per-user cache directory; network-enabled commands cannot write caches");
  }
  return probe;
#endif
}

}  // namespace codexd::sandbox::macos_backend
