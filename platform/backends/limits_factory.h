// The one place that picks the resource-limits mechanism: cgroups on Linux where a hierarchy
// is usable, rlimits where not (with the reason as a warning), or none when configured.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "platform/limits/limits.h"

namespace codexd::limits {

enum class MechanismPreference {
  kAuto,    // cgroups, else rlimits (warned)
  kCgroup,  // cgroups or the daemon does not start
  kRlimit,  // rlimits only (also: to test the fallback)
  kNone,    // no limits, no accounting
};

struct LimitsOptions {
  MechanismPreference preference = MechanismPreference::kAuto;
  std::string instance = "codexd";  // the daemon's cgroup tree name
};

Result<std::unique_ptr<LimitsManager>> create_limits_manager(const LimitsOptions& options);

}  // namespace codexd::limits
