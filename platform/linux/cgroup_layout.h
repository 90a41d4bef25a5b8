// What cgroups this machine offers the daemon, found at start: the v2 hierarchy (pure v2 at
// /sys/fs/cgroup, or the hybrid one at /sys/fs/cgroup/unified), which gives membership,
// cgroup.kill and cpu.stat without any controller; and for each controller we use (pids,
// memory, cpu, cpuacct, freezer, io) whether the v2 hierarchy has it in cgroup.controllers or a
// v1 hierarchy mounts it. Each hierarchy is used at the daemon's own place in it
// (/proc/self/cgroup), so codexd nests inside whatever unit or container started it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace codexd::limits::cgroups {

struct Hierarchy {
  std::string own_dir;  // the daemon's cgroup in this hierarchy (mount point + own path)
  bool v2 = false;
  std::vector<std::string> controllers;  // the ones codexd uses from this hierarchy
};

struct Layout {
  std::vector<Hierarchy> hierarchies;  // the v2 one first when present
  // Index into `hierarchies` of the one providing each, -1: none.
  int v2 = -1;
  int pids = -1, memory = -1, cpu = -1, cpuacct = -1, freezer = -1, io = -1;
  bool has_kill = false;  // v2 cgroup.kill (Linux 5.14)

  int index_of(const std::string& controller) const;
  bool empty() const { return hierarchies.empty(); }
};

// From the text of /proc/self/mounts and /proc/self/cgroup; `v2_controllers(dir)` reads
// <dir>/cgroup.controllers, `exists(path)` checks a file (injected so that tests can feed the
// layouts of other machines). An error says why no cgroup is usable.
Result<Layout> discover_layout(const std::string& mounts, const std::string& self_cgroup,
                               const std::function<std::string(const std::string&)>& v2_controllers,
                               const std::function<bool(const std::string&)>& exists);

// The same on this machine.
Result<Layout> discover_layout();

// "cgroup v2 at /sys/fs/cgroup/unified (membership, kill); memory, pids, cpu, cpuacct from v1"
std::string describe(const Layout& layout);

}  // namespace codexd::limits::cgroups
