#include "platform/limits/limits.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>

#include "platform/limits/process_group_group.h"

namespace codexd::limits {

const char* termination_name(Termination t) {
  switch (t) {
    case Termination::kExited: return "exited";
    case Termination::kSignalled: return "signalled";
    case Termination::kTimedOut: return "timed_out";
    case Termination::kCancelled: return "cancelled";
    case Termination::kOutOfMemory: return "out_of_memory";
    case Termination::kProcessLimit: return "process_limit";
  }
  return "exited";
}

Termination classify(LimitHit hit, int exit_code, bool killed_by_signal) {
  if (hit == LimitHit::kOutOfMemory) return Termination::kOutOfMemory;
  if (hit == LimitHit::kProcessLimit && (exit_code != 0 || killed_by_signal)) return Termination::kProcessLimit;
  return killed_by_signal ? Termination::kSignalled : Termination::kExited;
}

std::string format_bytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (value == static_cast<double>(static_cast<uint64_t>(value))) {
    std::snprintf(text, sizeof text, "%llu %s", static_cast<unsigned long long>(value), kUnits[unit]);
  } else {
    std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  }
  return text;
}

std::string termination_note(Termination t, const ResourceLimits& effective) {
  if (t == Termination::kOutOfMemory) {
    return "killed: memory limit " + (effective.memory_max ? format_bytes(*effective.memory_max) : std::string("?")) +
           " reached";
  }
  if (t == Termination::kProcessLimit) {
    return "stopped: process limit " + (effective.pids_max ? std::to_string(*effective.pids_max) : std::string("?")) +
           " reached (fork failed)";
  }
  return "";
}

namespace {

template <typename T>
std::optional<T> smaller(const std::optional<T>& a, const std::optional<T>& b) {
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

}  // namespace

ResourceLimits tighter(const ResourceLimits& a, const ResourceLimits& b) {
  ResourceLimits out;
  out.pids_max = smaller(a.pids_max, b.pids_max);
  out.memory_max = smaller(a.memory_max, b.memory_max);
  out.memory_swap_max = smaller(a.memory_swap_max, b.memory_swap_max);
  out.memory_high = smaller(a.memory_high, b.memory_high);
  out.cpu_weight = a.cpu_weight ? a.cpu_weight : b.cpu_weight;  // weights are relative, not nested maxima
  out.cpu_max_percent = smaller(a.cpu_max_percent, b.cpu_max_percent);
  out.io_weight = a.io_weight ? a.io_weight : b.io_weight;
  out.cpu_seconds = smaller(a.cpu_seconds, b.cpu_seconds);
  return out;
}

const char* mechanism_name(Mechanism m) {
  switch (m) {
    case Mechanism::kNone: return "none";
    case Mechanism::kRlimit: return "rlimit";
    case Mechanism::kCgroupV1: return "cgroup-v1";
    case Mechanism::kCgroupHybrid: return "cgroup-hybrid";
    case Mechanism::kCgroupV2: return "cgroup-v2";
  }
  return "none";
}

Result<std::unique_ptr<ResourceGroup>> LimitsManager::adopt(const AdoptedGroup& group) {
  auto adopted = std::make_unique<ProcessGroupGroup>(group.effective, std::vector<posix::ResourceLimit>{});
  if (group.leader > 0) adopted->started(group.leader);
  return std::unique_ptr<ResourceGroup>(std::move(adopted));
}

namespace {

class NoLimitsManager : public LimitsManager {
 public:
  explicit NoLimitsManager(std::string reason) {
    status_.mechanism = Mechanism::kNone;
    status_.reason = std::move(reason);
  }
  Result<std::unique_ptr<ResourceGroup>> create(const GroupRequest& request) override {
    return std::unique_ptr<ResourceGroup>(new ProcessGroupGroup(tighter(request.session, request.agent_budget), {}));
  }
  const MechanismStatus& status() const override { return status_; }

 private:
  MechanismStatus status_;
};

}  // namespace

std::unique_ptr<LimitsManager> create_no_limits_manager(std::string reason) {
  return std::make_unique<NoLimitsManager>(std::move(reason));
}

}  // namespace codexd::limits
