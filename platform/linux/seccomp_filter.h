// Builds and loads the libseccomp filter described by seccomp_rules().
#pragma once

#include "base/status.h"
#include "base/unique_fd.h"
#include "platform/linux/helper_config.h"

namespace codexd::sandbox::linux_backend {

// Builds the filter for the native architecture only (x32 and i386 syscalls hit the
// bad-arch action, SIGSYS) and loads it into the calling thread. Requires no_new_privs or
// CAP_SYS_ADMIN. `build_only` checks that every rule compiles without loading anything.
// With config.supervise_exec, execve and execveat notify a listener instead; with
// config.metadata_keeper, the chmod calls do. The listener's descriptor (close-on-exec) goes to
// `listener`, which must then be non-null.
Status install_seccomp_filter(const HelperConfig& config, bool build_only = false, UniqueFd* listener = nullptr);

// The metadata keeper's filter (FilterRole::kKeeper): no notifications, nothing returned.
Status install_keeper_filter(const HelperConfig& config);

}  // namespace codexd::sandbox::linux_backend
