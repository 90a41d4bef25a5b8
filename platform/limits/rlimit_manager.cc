#include "platform/limits/rlimit_manager.h"

#include <sys/resource.h>

#include "platform/limits/process_group_group.h"

namespace codexd::limits {

std::vector<posix::ResourceLimit> rlimits_for(const ResourceLimits& effective) {
  std::vector<posix::ResourceLimit> out;
  if (effective.pids_max) out.push_back({RLIMIT_NPROC, *effective.pids_max, *effective.pids_max});
  if (effective.memory_max) {
    uint64_t bytes = *effective.memory_max + effective.memory_swap_max.value_or(0);
    out.push_back({RLIMIT_AS, bytes, bytes});
  }
  if (effective.cpu_seconds) out.push_back({RLIMIT_CPU, *effective.cpu_seconds, *effective.cpu_seconds + 1});
  return out;
}

namespace {

class RlimitManager : public LimitsManager {
 public:
  explicit RlimitManager(std::string reason) {
    status_.mechanism = Mechanism::kRlimit;
    status_.reason = std::move(reason);
    status_.warnings.push_back("resource limits fall back to rlimits (" + status_.reason +
                               "): RLIMIT_NPROC/RLIMIT_AS/RLIMIT_CPU per command, no per-agent budget, no "
                               "accounting, and a process that leaves its process group survives a kill");
  }
  Result<std::unique_ptr<ResourceGroup>> create(const GroupRequest& request) override {
    // No agent level exists: each command gets the tighter of its own and its agent's limits.
    ResourceLimits effective = tighter(request.session, request.agent_budget);
    return std::unique_ptr<ResourceGroup>(new ProcessGroupGroup(effective, rlimits_for(effective)));
  }
  const MechanismStatus& status() const override { return status_; }

 private:
  MechanismStatus status_;
};

}  // namespace

std::unique_ptr<LimitsManager> create_rlimit_manager(std::string reason) {
  return std::make_unique<RlimitManager>(std::move(reason));
}

}  // namespace codexd::limits
