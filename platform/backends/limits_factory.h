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
  uint64_t daemon_memory_min = uint64_t{64} << 20;  // memory.min of the daemon's own leaf
  // User mode: ask the user's systemd for a delegated scope holding the daemon (Linux,
  // cgroup_delegation.h), else fall back to rlimits with the reason.
  enum class SystemdScope { kNever, kIfNotWritable, kAlways };
  SystemdScope systemd_scope = SystemdScope::kNever;
  // Durable sessions: groups a previous daemon left with processes in them stay at start.
  bool keep_populated_groups = false;
};

Result<std::unique_ptr<LimitsManager>> create_limits_manager(const LimitsOptions& options);

}  // namespace codexd::limits
