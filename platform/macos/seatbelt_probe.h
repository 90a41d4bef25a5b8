// What the Seatbelt backend needs from the machine, looked up once at daemon start.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "platform/sandbox/sandbox.h"

namespace codexd::sandbox::macos_backend {

struct SeatbeltProbe {
  CapabilityReport report;  // chosen == kMacosSeatbelt when plans can be made
  std::optional<std::string> darwin_user_cache_dir;
};

// sandbox-exec must be a regular executable that only root can change
// (posix::check_root_owned_executable): whoever could replace it could run every command
// unsandboxed. Returns the canonical path.
Result<std::string> check_trusted_sandbox_exec(const std::string& path);

// On macOS: the check above for `sandbox_exec`, and the per-user cache directory. Elsewhere
// the report says kNone with the reason (Seatbelt exists only on macOS). A backend preference
// other than auto names a Linux backend and is refused (kNone, with a warning).
SeatbeltProbe probe_seatbelt(const SandboxManagerOptions& options, const std::string& sandbox_exec);

}  // namespace codexd::sandbox::macos_backend
