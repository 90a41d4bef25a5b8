// String forms of the sandbox enums (config files, plans, status reports).
#include "platform/sandbox/sandbox.h"

namespace codexd::sandbox {

std::string_view to_string(SandboxMode mode) {
  switch (mode) {
    case SandboxMode::kReadOnly: return "read-only";
    case SandboxMode::kWorkspaceWrite: return "workspace-write";
    case SandboxMode::kDangerFullAccess: return "danger-full-access";
  }
  return "read-only";
}

std::optional<SandboxMode> parse_sandbox_mode(std::string_view text) {
  if (text == "read-only") return SandboxMode::kReadOnly;
  if (text == "workspace-write") return SandboxMode::kWorkspaceWrite;
  if (text == "danger-full-access") return SandboxMode::kDangerFullAccess;
  return std::nullopt;
}

std::string_view to_string(NetworkMode mode) {
  switch (mode) {
    case NetworkMode::kOff: return "off";
    case NetworkMode::kProxy: return "proxy";
    case NetworkMode::kHost: return "host";
  }
  return "off";
}

std::optional<NetworkMode> parse_network_mode(std::string_view text) {
  if (text == "off") return NetworkMode::kOff;
  if (text == "proxy") return NetworkMode::kProxy;
  if (text == "host") return NetworkMode::kHost;
  return std::nullopt;
}

std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::kNone: return "none";
    case Backend::kLinuxBwrap: return "linux-bwrap";
    case Backend::kLinuxLandlock: return "linux-landlock";
    case Backend::kMacosSeatbelt: return "macos-seatbelt";
    case Backend::kWindowsRestrictedToken: return "windows-restricted-token";
  }
  return "none";
}

std::string_view to_string(BackendPreference preference) {
  switch (preference) {
    case BackendPreference::kAuto: return "auto";
    case BackendPreference::kBwrap: return "bwrap";
    case BackendPreference::kLandlock: return "landlock";
  }
  return "auto";
}

std::optional<BackendPreference> parse_backend_preference(std::string_view text) {
  if (text == "auto") return BackendPreference::kAuto;
  if (text == "bwrap") return BackendPreference::kBwrap;
  if (text == "landlock") return BackendPreference::kLandlock;
  return std::nullopt;
}

}  // namespace codexd::sandbox
