// Writing limits into a group's interface files, v1 or v2 per controller; reading accounting
// and which limit was hit.
#pragma once

#include "platform/limits/limits.h"
#include "platform/linux/cgroup_layout.h"

namespace codexd::limits::cgroups {

using GroupDirs = std::vector<std::string>;

// Each limit into the hierarchy of its controller. A controller this machine lacks is skipped
// (GetStatus lists what exists); a write that fails is an error naming the file.
Status apply_limits(const Layout& layout, const GroupDirs& dirs, const ResourceLimits& limits);

ResourceUsage read_usage(const Layout& layout, const GroupDirs& dirs);
LimitHit read_limit_hit(const Layout& layout, const GroupDirs& dirs);

// cgroup v1 cpu.shares for a v2 weight, as systemd maps them (weight 100 = 1024 shares).
uint64_t shares_for_weight(uint32_t weight);

}  // namespace codexd::limits::cgroups
