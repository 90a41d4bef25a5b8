#include "platform/linux/cgroup_layout.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "platform/linux/cgroup_files.h"

namespace codexd::limits::cgroups {
namespace {

constexpr const char* kUsedControllers[] = {"pids", "memory", "cpu", "cpuacct", "freezer", "io"};

struct Mount {
  std::string point;
  bool v2 = false;
  std::vector<std::string> options;  // v1: the controllers among the mount options
};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::vector<Mount> cgroup_mounts(const std::string& mounts) {
  std::vector<Mount> out;
  std::istringstream in(mounts);
  std::string device, point, type, options;
  std::string rest;
  while (in >> device >> point >> type >> options) {
    std::getline(in, rest);
    if (type == "cgroup2") out.push_back({point, true, {}});
    if (type == "cgroup") out.push_back({point, false, split(options, ',')});
  }
  return out;
}

// /proc/self/cgroup: "0::/path" (v2) and "N:memory,cpu:/path" (v1), keyed by "" and controller.
std::map<std::string, std::string> own_paths(const std::string& self_cgroup) {
  std::map<std::string, std::string> out;
  for (const auto& line : split(self_cgroup, '\n')) {
    size_t first = line.find(':');
    size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    std::string path = line.substr(second + 1);
    std::string controllers = line.substr(first + 1, second - first - 1);
    if (controllers.empty()) out[""] = path;
    for (const auto& c : split(controllers, ',')) out[c] = path;
  }
  return out;
}

std::string join_dir(const std::string& point, const std::string& own) {
  return own == "/" ? point : point + own;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

template <typename L>
auto& slot(L& layout, const std::string& controller) {
  if (controller == "pids") return layout.pids;
  if (controller == "memory") return layout.memory;
  if (controller == "cpu") return layout.cpu;
  if (controller == "cpuacct") return layout.cpuacct;
  if (controller == "freezer") return layout.freezer;
  return layout.io;
}

// Adds the v1 mount of each controller v2 does not provide.
void add_v1(Layout& layout, const std::vector<Mount>& mounts, const std::map<std::string, std::string>& own) {
  for (const char* controller : kUsedControllers) {
    if (slot(layout, controller) >= 0) continue;
    // With a v2 hierarchy, its cgroup.kill (or the kill loop) replaces the v1 freezer.
    if (layout.v2 >= 0 && std::string(controller) == "freezer") continue;
    for (const auto& m : mounts) {
      if (m.v2 || !contains(m.options, controller) || !own.count(controller)) continue;
      std::string dir = join_dir(m.point, own.at(controller));
      auto it = std::find_if(layout.hierarchies.begin(), layout.hierarchies.end(),
                             [&](const Hierarchy& h) { return h.own_dir == dir; });
      if (it == layout.hierarchies.end()) {
        layout.hierarchies.push_back({dir, false, {}});
        it = layout.hierarchies.end() - 1;
      }
      it->controllers.push_back(controller);
      slot(layout, controller) = static_cast<int>(it - layout.hierarchies.begin());
      break;
    }
  }
}

}  // namespace

int Layout::index_of(const std::string& controller) const {
  return slot(*this, controller);
}

Result<Layout> discover_layout(const std::string& mounts, const std::string& self_cgroup,
                               const std::function<std::string(const std::string&)>& v2_controllers,
                               const std::function<bool(const std::string&)>& exists) {
  const auto all = cgroup_mounts(mounts);
  const auto own = own_paths(self_cgroup);
  Layout layout;
  auto v2 = std::find_if(all.begin(), all.end(), [](const Mount& m) { return m.v2; });
  if (v2 != all.end() && own.count("")) {
    Hierarchy h{join_dir(v2->point, own.at("")), true, {}};
    const auto available = split(v2_controllers(h.own_dir), ' ');
    for (const char* controller : kUsedControllers) {
      if (contains(available, controller)) h.controllers.push_back(controller);
    }
    layout.hierarchies.push_back(h);
    layout.v2 = 0;
    for (const auto& c : h.controllers) slot(layout, c) = 0;
    // cpuacct's numbers come from v2's cpu.stat, which exists without any controller.
    layout.cpuacct = 0;
    // The root cgroup has no cgroup.kill even where the kernel has it; CgroupTree checks again
    // in its own directory.
    layout.has_kill = exists(h.own_dir + "/cgroup.kill");
  }
  add_v1(layout, all, own);
  if (layout.empty()) return Unavailable("no cgroup hierarchy is mounted (no cgroup2 or cgroup entry in /proc/self/mounts)");
  return layout;
}

Result<Layout> discover_layout() {
  auto mounts = read_small_file("/proc/self/mounts");
  auto self = read_small_file("/proc/self/cgroup");
  if (!mounts || !self) return Unavailable("cannot read /proc/self/mounts or /proc/self/cgroup");
  return discover_layout(
      *mounts, *self,
      [](const std::string& dir) {
        auto text = read_small_file(dir + "/cgroup.controllers");
        std::string line = text.value_or("");
        std::replace(line.begin(), line.end(), '\n', ' ');
        return line;
      },
      path_exists);
}

std::string describe(const Layout& layout) {
  std::string out;
  if (layout.v2 >= 0) {
    out = "cgroup v2 at " + layout.hierarchies[layout.v2].own_dir + " (membership" +
          (layout.has_kill ? ", cgroup.kill" : "") + ", cpu.stat)";
  }
  for (size_t i = 0; i < layout.hierarchies.size(); ++i) {
    const auto& h = layout.hierarchies[i];
    if (h.controllers.empty()) continue;
    std::string names;
    for (const auto& c : h.controllers) names += (names.empty() ? "" : ",") + c;
    out += (out.empty() ? "" : "; ") + names + (h.v2 ? " from v2" : " from v1 at " + h.own_dir);
  }
  return out;
}

}  // namespace codexd::limits::cgroups
