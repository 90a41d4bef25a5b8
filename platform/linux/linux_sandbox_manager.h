// The Linux SandboxManager: bwrap + helper (seccomp, no_new_privs, no capabilities) when
// user namespaces work, Landlock + helper otherwise, and a refusal when neither can enforce
// the spec. Built once at daemon start (probes the machine); plan() is cheap and pure.
// Its Linux details (bwrap, Landlock ABI, ...) are read with linux_capabilities().
#pragma once

#include <memory>

#include "platform/linux/linux_capabilities.h"
#include "platform/sandbox/sandbox.h"

namespace codexd::sandbox::linux_backend {

std::unique_ptr<SandboxManager> create_linux_sandbox_manager(const SandboxManagerOptions& options,
                                                             const LinuxSandboxOptions& linux_options = {});

// Where the helper lives when options.helper_path is empty: next to the running executable.
std::string default_helper_path();

// Write access the Landlock backend always grants (harmless sinks).
const std::vector<std::string>& landlock_writable_devices();

}  // namespace codexd::sandbox::linux_backend
