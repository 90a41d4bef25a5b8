// The one-time machine probe behind CapabilityReport and LinuxCapabilities: bwrap location,
// version and optional flags, whether an unprivileged user namespace (and a fresh /proc)
// works, the Landlock ABI, seccomp, and the helper's self-test. The whole probe has a hard
// time bound.
#pragma once

#include <string>

#include "platform/linux/bwrap_invocation.h"
#include "platform/linux/linux_capabilities.h"
#include "platform/sandbox/sandbox.h"

namespace codexd::sandbox::linux_backend {

struct LinuxProbe {
  CapabilityReport report;  // facts = capability_facts(caps)
  LinuxCapabilities caps;
  BwrapFeatures features;
  bool bwrap_usable = false;     // found, trusted, user namespaces work
  bool landlock_usable = false;  // ABI >= 1, seccomp, helper
};

LinuxProbe probe_linux_sandbox(const SandboxManagerOptions& options, const LinuxSandboxOptions& linux_options,
                               const std::string& helper_path);

// How bwrap's failure text is classified (exposed for tests).
enum class BwrapFailure { kNone, kProcMount, kUserNamespace, kOther };
BwrapFailure classify_bwrap_failure(const std::string& output);

// Optional flags listed by `bwrap --help`.
std::vector<std::string> parse_bwrap_help_flags(const std::string& help_text);

}  // namespace codexd::sandbox::linux_backend
