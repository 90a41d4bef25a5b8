#include "platform/backends/limits_factory.h"

#include "platform/limits/rlimit_manager.h"
#if defined(__linux__)
#include "platform/linux/cgroup_manager.h"
#endif

namespace codexd::limits {

Result<std::unique_ptr<LimitsManager>> create_limits_manager(const LimitsOptions& options) {
  switch (options.preference) {
    case MechanismPreference::kNone: return create_no_limits_manager("limits.mechanism = \"none\"");
    case MechanismPreference::kRlimit: return create_rlimit_manager("limits.mechanism = \"rlimit\"");
    case MechanismPreference::kAuto:
    case MechanismPreference::kCgroup: break;
  }
#if defined(__linux__)
  cgroups::CgroupOptions cgroup_options;
  cgroup_options.instance = options.instance;
  cgroup_options.daemon_memory_min = options.daemon_memory_min;
  cgroup_options.systemd_scope = static_cast<cgroups::CgroupOptions::SystemdScope>(options.systemd_scope);
  cgroup_options.keep_populated_groups = options.keep_populated_groups;
  auto manager = cgroups::create_cgroup_manager(cgroup_options);
  if (manager.ok()) return manager;
  if (options.preference == MechanismPreference::kCgroup) {
    return Unavailable("limits.mechanism = \"cgroup\", but no cgroup is usable: " + manager.status().message());
  }
  return create_rlimit_manager("no usable cgroup: " + manager.status().message());
#else
  if (options.preference == MechanismPreference::kCgroup) return Unavailable("cgroups exist only on Linux");
  return create_rlimit_manager("this OS has no cgroups; rlimits are what it offers");
#endif
}

}  // namespace codexd::limits
