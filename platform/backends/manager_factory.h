// The one place that knows every sandbox backend and picks this platform's.
#pragma once

#include <memory>

#include "platform/sandbox/sandbox.h"

namespace codexd::sandbox {

// The platform's manager (probes the machine): Linux bwrap/Landlock, macOS Seatbelt. Never
// null: on a platform without a backend it returns create_unavailable_sandbox_manager().
// Backend-specific options keep their defaults here; tests that need them call the backend's
// own factory (e.g. linux_backend::create_linux_sandbox_manager).
std::unique_ptr<SandboxManager> create_sandbox_manager(const SandboxManagerOptions& options);

// The manager used where no backend exists (exposed so it can be tested on every platform):
// capabilities().chosen == kNone, so plan() refuses everything but danger-full-access with
// kUnavailable; plan_unconfined() works as everywhere.
std::unique_ptr<SandboxManager> create_unavailable_sandbox_manager();

}  // namespace codexd::sandbox
