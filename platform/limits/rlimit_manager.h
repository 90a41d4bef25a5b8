// The fallback where no cgroup is usable (macOS, a container without delegation, or
// `limits.mechanism = "rlimit"`): each command sets RLIMIT_NPROC (pids_max), RLIMIT_AS
// (memory_max + memory_swap_max) and RLIMIT_CPU (cpu_seconds) on itself. Weaker than cgroups
// and said so in the status: RLIMIT_NPROC counts all processes of the uid (and root ignores
// it), RLIMIT_AS limits address space rather than memory, nothing is measured, and a process
// that leaves the process group survives a kill.
#pragma once

#include <memory>
#include <string>

#include "platform/limits/limits.h"

namespace codexd::limits {

// `reason`: why the fallback is in use (logged and reported as a warning).
std::unique_ptr<LimitsManager> create_rlimit_manager(std::string reason);

// The rlimits for `effective` (exposed for tests).
std::vector<posix::ResourceLimit> rlimits_for(const ResourceLimits& effective);

}  // namespace codexd::limits
