// Builds and loads the libseccomp filter described by seccomp_rules().
#pragma once

#include <linux/filter.h>

#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "platform/linux/helper_config.h"
#include "platform/linux/seccomp_rules.h"

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

// Whether `role`'s filter has a user-notification listener (exec supervision or the keeper's
// chmod and chown): it is then loaded with SECCOMP_FILTER_FLAG_NEW_LISTENER.
bool filter_notifies(const HelperConfig& config, FilterRole role);

// The BPF program libseccomp makes of the filter, exactly what install_* would load, for
// loading elsewhere with seccomp(2) (seccomp_program.h).
Result<std::vector<sock_filter>> compile_seccomp_program(const HelperConfig& config, FilterRole role);

}  // namespace codexd::sandbox::linux_backend
