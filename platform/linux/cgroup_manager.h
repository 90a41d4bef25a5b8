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
  // memory.min of the daemon's own leaf (cgroup v2 with the memory controller); 0: none.
  uint64_t daemon_memory_min = uint64_t{64} << 20;
  // User mode: ask the user's systemd for a delegated scope holding the daemon, then use that
  // (kIfNotWritable: only where the daemon's own cgroup is not writable). Where systemd gives
  // none, create_cgroup_manager() fails with the reason (the caller falls back to rlimits).
  enum class SystemdScope { kNever, kIfNotWritable, kAlways };
  SystemdScope systemd_scope = SystemdScope::kNever;
  int systemd_timeout_ms = 5000;
  // Durable sessions: a previous daemon's groups that still hold processes are left alone at
  // start (their sessions' shims are adopted).
  bool keep_populated_groups = false;
};

Result<std::unique_ptr<LimitsManager>> create_cgroup_manager(const CgroupOptions& options);

}  // namespace codexd::limits::cgroups
