#include "platform/macos/seatbelt_probe.h"

#include <unistd.h>

#include "platform/macos/seatbelt_paths.h"
#include "platform/posix/root_owned.h"

namespace codexd::sandbox::macos_backend {
namespace {

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
  return posix::check_root_owned_executable(path, "sandbox-exec");
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
