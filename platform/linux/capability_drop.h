// Drops every capability the calling process may hold, as far as the kernel lets it:
// securebits locked (no root magic on exec, no ambient raise), bounding set emptied, ambient
// and inheritable cleared, then effective/permitted zeroed. Inside bwrap the helper already
// has no capabilities, so the privileged steps are skipped rather than failing.
#pragma once

#include "base/status.h"

namespace codexd::sandbox::linux_backend {

Status drop_all_capabilities();

// Whether the effective, permitted, inheritable and ambient sets are all empty.
Result<bool> holds_no_capabilities();

}  // namespace codexd::sandbox::linux_backend
