#include "platform/linux/cgroup_limits.h"

#include <algorithm>

#include "platform/linux/cgroup_files.h"
#include "platform/linux/cgroup_tree.h"

namespace codexd::limits::cgroups {
namespace {

constexpr uint64_t kCpuPeriodUs = 100'000;

std::string number_or_max(const std::optional<uint64_t>& value) {
  return value ? std::to_string(*value) : std::string("max");
}

const std::string* dir_of(const Layout&, const GroupDirs& dirs, int index) {
  return index >= 0 && static_cast<size_t>(index) < dirs.size() ? &dirs[index] : nullptr;
}

Status apply_memory(const Layout& layout, const GroupDirs& dirs, const ResourceLimits& l) {
  const std::string* dir = dir_of(layout, dirs, layout.memory);
  if (!dir) return Status::Ok();
  if (layout.hierarchies[layout.memory].v2) {
    if (l.memory_max) CODEXD_RETURN_IF_ERROR(write_small_file(*dir + "/memory.max", std::to_string(*l.memory_max)));
    if (l.memory_high) CODEXD_RETURN_IF_ERROR(write_small_file(*dir + "/memory.high", std::to_string(*l.memory_high)));
    if (l.memory_swap_max && path_exists(*dir + "/memory.swap.max")) {
      CODEXD_RETURN_IF_ERROR(write_small_file(*dir + "/memory.swap.max", std::to_string(*l.memory_swap_max)));
    }
    return Status::Ok();
  }
  if (l.memory_max) {
    CODEXD_RETURN_IF_ERROR(write_small_file(*dir + "/memory.limit_in_bytes", std::to_string(*l.memory_max)));
    // memsw counts memory + swap; it must not be below limit_in_bytes (set after it).
    if (path_exists(*dir + "/memory.memsw.limit_in_bytes")) {
      uint64_t total = *l.memory_max + l.memory_swap_max.value_or(0);
      CODEXD_RETURN_IF_ERROR(write_small_file(*dir + "/memory.memsw.limit_in_bytes", std::to_string(total)));
    }
  }
  if (l.memory_high) {
    CODEXD_RETURN_IF_ERROR(write_small_file(*dir + "/memory.soft_limit_in_bytes", std::to_string(*l.memory_high)));
  }
  return Status::Ok();
}

Status apply_cpu(const Layout& layout, const GroupDirs& dirs, const ResourceLimits& l) {
  const std::string* dir = dir_of(layout, dirs, layout.cpu);
  if (!dir) return Status::Ok();
  const bool v2 = layout.hierarchies[layout.cpu].v2;
  if (l.cpu_weight) {
    if (v2) CODEXD_RETURN_IF_ERROR(write_small_file(*dir + "/cpu.weight", std::to_string(*l.cpu_weight)));
    else CODEXD_RETURN_IF_ERROR(write_small_file(*dir + "/cpu.shares", std::to_string(shares_for_weight(*l.cpu_weight))));
  }
  if (l.cpu_max_percent) {
    uint64_t quota = uint64_t{*l.cpu_max_percent} * kCpuPeriodUs / 100;
    if (v2) {
      CODEXD_RETURN_IF_ERROR(write_small_file(*dir + "/cpu.max", std::to_string(quota) + " " + std::to_string(kCpuPeriodUs)));
    } else {
      CODEXD_RETURN_IF_ERROR(write_small_file(*dir + "/cpu.cfs_period_us", std::to_string(kCpuPeriodUs)));
      CODEXD_RETURN_IF_ERROR(write_small_file(*dir + "/cpu.cfs_quota_us", std::to_string(quota)));
    }
  }
  return Status::Ok();
}

}  // namespace

uint64_t shares_for_weight(uint32_t weight) {
  uint64_t shares = uint64_t{std::clamp<uint32_t>(weight, 1, 10000)} * 1024 / 100;
  return std::max<uint64_t>(shares, 2);  // the kernel's minimum
}

Status apply_limits(const Layout& layout, const GroupDirs& dirs, const ResourceLimits& limits) {
  if (const std::string* dir = dir_of(layout, dirs, layout.pids); dir && limits.pids_max) {
    CODEXD_RETURN_IF_ERROR(write_small_file(*dir + "/pids.max", number_or_max(limits.pids_max)));
  }
  CODEXD_RETURN_IF_ERROR(apply_memory(layout, dirs, limits));
  CODEXD_RETURN_IF_ERROR(apply_cpu(layout, dirs, limits));
  if (const std::string* dir = dir_of(layout, dirs, layout.io); dir && limits.io_weight && layout.hierarchies[layout.io].v2) {
    CODEXD_RETURN_IF_ERROR(write_small_file(*dir + "/io.weight", "default " + std::to_string(*limits.io_weight)));
  }
  return Status::Ok();
}

ResourceUsage read_usage(const Layout& layout, const GroupDirs& dirs) {
  ResourceUsage usage;
  if (const std::string* dir = dir_of(layout, dirs, layout.memory)) {
    const bool v2 = layout.hierarchies[layout.memory].v2;
    usage.peak_memory_bytes = read_number(*dir + (v2 ? "/memory.peak" : "/memory.max_usage_in_bytes")).value_or(0);
    usage.known = true;
  }
  if (const std::string* dir = dir_of(layout, dirs, layout.cpuacct)) {
    if (layout.hierarchies[layout.cpuacct].v2) {
      std::string stat = read_small_file(*dir + "/cpu.stat").value_or("");
      usage.cpu_user_usec = keyed_value(stat, "user_usec").value_or(0);
      usage.cpu_system_usec = keyed_value(stat, "system_usec").value_or(0);
    } else {
      usage.cpu_user_usec = read_number(*dir + "/cpuacct.usage_user").value_or(0) / 1000;
      usage.cpu_system_usec = read_number(*dir + "/cpuacct.usage_sys").value_or(0) / 1000;
    }
    usage.known = true;
  }
  if (const std::string* dir = dir_of(layout, dirs, layout.pids)) {
    usage.peak_processes = read_number(*dir + "/pids.peak").value_or(0);
  }
  return usage;
}

LimitHit read_limit_hit(const Layout& layout, const GroupDirs& dirs) {
  if (const std::string* dir = dir_of(layout, dirs, layout.memory)) {
    const bool v2 = layout.hierarchies[layout.memory].v2;
    // v1 counts an OOM kill only in the victim's own group: the command's part (cgroup_tree.h).
    for (const std::string& where : {*dir, *dir + "/" + kCommandPart}) {
      std::string events = read_small_file(where + (v2 ? "/memory.events" : "/memory.oom_control")).value_or("");
      if (keyed_value(events, "oom_kill").value_or(0) > 0) return LimitHit::kOutOfMemory;
    }
  }
  if (const std::string* dir = dir_of(layout, dirs, layout.pids)) {
    // v1 counts a refused fork in the forking group (the command's part), v2 in the limited one.
    for (const std::string& where : {*dir, *dir + "/" + kCommandPart}) {
      std::string events = read_small_file(where + "/pids.events").value_or("");
      std::string local = read_small_file(where + "/pids.events.local").value_or("");
      if (keyed_value(events, "max").value_or(0) > 0 || keyed_value(local, "max").value_or(0) > 0) {
        return LimitHit::kProcessLimit;
      }
    }
  }
  return LimitHit::kNone;
}

}  // namespace codexd::limits::cgroups
