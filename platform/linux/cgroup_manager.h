// The Linux LimitsManager: one cgroup per command under the daemon's own tree (cgroup_tree.h),
// on pure v2, hybrid or v1 hosts alike. create_cgroup_manager() fails (with the reason) where
// no cgroup is usable; the caller then falls back to rlimits and says why.
#pragma once

#include <memory>
#include <string>

#include "platform/limits/limits.h"

namespace codexd::limits::cgroups {

struct CgroupOptions {
  std::string instance = "codexd";  // the tree's name under the daemon's own cgroup
  // Lower the daemon's own oom_score_adj to this (commands are reset to 0). Absent: leave it.
  std::optional<int> daemon_oom_score_adj = -900;
};

Result<std::unique_ptr<LimitsManager>> create_cgroup_manager(const CgroupOptions& options);

}  // namespace codexd::limits::cgroups
