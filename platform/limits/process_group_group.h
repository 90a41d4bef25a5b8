// The group where no cgroup holds the command: its process group, plus rlimits the child sets
// on itself. A process that calls setsid (or setpgid) escapes it; docs/sandbox.md says so.
#pragma once

#include <vector>

#include "platform/limits/limits.h"

namespace codexd::limits {

class ProcessGroupGroup : public ResourceGroup {
 public:
  ProcessGroupGroup(ResourceLimits effective, std::vector<posix::ResourceLimit> rlimits)
      : effective_(effective), rlimits_(std::move(rlimits)) {}
  void prepare(posix::SpawnRequest& request) const override;
  void started(pid_t leader) override { leader_ = leader; }
  void leader_reaped() override { leader_ = -1; }
  Status signal_all(int signal) override;
  Status kill_all() override;
  ResourceUsage usage() const override { return {}; }
  LimitHit limit_hit() const override { return LimitHit::kNone; }
  const ResourceLimits& effective() const override { return effective_; }

 private:
  ResourceLimits effective_;
  std::vector<posix::ResourceLimit> rlimits_;
  pid_t leader_ = -1;
};

}  // namespace codexd::limits
