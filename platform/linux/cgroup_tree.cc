#include "platform/linux/cgroup_tree.h"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <filesystem>

#include "base/unique_fd.h"
#include "platform/linux/cgroup_delegation.h"
#include "platform/linux/cgroup_files.h"
#include "platform/linux/cgroup_limits.h"

namespace codexd::limits::cgroups {
namespace {

namespace fs = std::filesystem;

// The v2 controllers codexd enables for its subtree.
constexpr const char* kV2Controllers[] = {"pids", "memory", "cpu", "io"};

std::string parent_of(const std::string& dir) { return fs::path(dir).parent_path().string(); }

// Writes "+c" for each controller; a controller the kernel refuses is reported, not fatal.
Status enable_in(const std::string& dir, const std::vector<std::string>& controllers) {
  std::string failed;
  for (const auto& c : controllers) {
    if (!write_small_file(dir + "/cgroup.subtree_control", "+" + c).ok()) failed += (failed.empty() ? "" : ",") + c;
  }
  if (!failed.empty()) return Unavailable("cannot enable " + failed + " in " + dir + "/cgroup.subtree_control");
  return Status::Ok();
}

// Pure v2's no-internal-processes rule: a cgroup with processes cannot give controllers to its
// children. When the daemon is alone in its cgroup, it moves into a leaf of its own first.
Status prepare_v2_own(const Hierarchy& h, const std::string& instance, uint64_t memory_min) {
  if (enable_in(h.own_dir, h.controllers).ok()) return Status::Ok();
  auto pids = read_pids(h.own_dir + "/cgroup.procs");
  if (pids.size() != 1 || pids[0] != ::getpid()) {
    return Unavailable("the daemon shares its cgroup " + h.own_dir + " with other processes, so it cannot delegate "
                       "controllers (run it as a unit with Delegate=yes)");
  }
  std::string leaf = h.own_dir + "/" + instance + "-daemon";
  if (::mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) return ErrnoStatus("mkdir " + leaf, errno);
  CODEXD_RETURN_IF_ERROR(write_small_file(leaf + "/cgroup.procs", std::to_string(::getpid())));
  CODEXD_RETURN_IF_ERROR(enable_in(h.own_dir, h.controllers));
  set_memory_floor(leaf, memory_min);  // so that the daemon survives when a session does not
  return Status::Ok();
}

// Without the v2 controllers: the layout falls back to what v1 offers.
void drop_v2_controllers(Layout& layout) {
  for (const auto& c : layout.hierarchies[layout.v2].controllers) {
    if (c == "pids") layout.pids = -1;
    if (c == "memory") layout.memory = -1;
    if (c == "cpu") layout.cpu = -1;
    if (c == "io") layout.io = -1;
  }
  layout.hierarchies[layout.v2].controllers.clear();
}

// The pids of `dir` and of its parts (cgroup.procs lists a directory's own processes only).
std::vector<int> pids_in(const std::string& dir) {
  std::vector<int> pids = read_pids(dir + "/cgroup.procs");
  for (const char* part : {kCommandPart, kKeeperPart}) {
    auto more = read_pids(dir + "/" + part + "/cgroup.procs");
    pids.insert(pids.end(), more.begin(), more.end());
  }
  return pids;
}

// Every session directory under <base>/sessions/<agent>/, then the agent directories.
std::vector<std::string> leftovers(const std::string& base) {
  std::vector<std::string> dirs;
  std::error_code ec;
  for (const auto& agent : fs::directory_iterator(base + "/sessions", ec)) {
    if (!agent.is_directory()) continue;
    for (const auto& group : fs::directory_iterator(agent.path(), ec)) {
      if (group.is_directory()) dirs.push_back(group.path().string());
    }
  }
  return dirs;
}

// Until the v2 group has no process left, at most until `deadline` (cgroup.events changes
// wake poll() with POLLPRI).
void wait_unpopulated(const std::string& dir, std::chrono::steady_clock::time_point deadline) {
  UniqueFd fd(::open((dir + "/cgroup.events").c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return;
  for (;;) {
    std::string text = read_small_file(dir + "/cgroup.events").value_or("");
    if (keyed_value(text, "populated").value_or(0) == 0) return;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    pollfd p{fd.get(), POLLPRI, 0};
    ::poll(&p, 1, static_cast<int>(left.count()));
  }
}

// The v2 cgroup systemd delegated to the daemon (Delegate=yes): its own, or the parent of the
// daemon/ leaf it moved into before (a re-exec inside the same unit).
std::optional<std::string> delegated_dir(const Hierarchy& h) {
  if (delegated_by_systemd(h.own_dir)) return h.own_dir;
  if (fs::path(h.own_dir).filename() == "daemon" && delegated_by_systemd(parent_of(h.own_dir))) {
    return parent_of(h.own_dir);
  }
  return std::nullopt;
}

// In a delegated cgroup the daemon moves into <dir>/daemon and its sessions go to
// <dir>/sessions: the whole subtree is the unit's, no codexd-<instance> level is needed.
// Returns the base for the sessions, "" where there is no delegation (`why` says so).
std::string use_delegation(Layout& layout, uint64_t memory_min, std::string& why, std::vector<std::string>& warnings) {
  Hierarchy& h = layout.hierarchies[layout.v2];
  auto dir = delegated_dir(h);
  if (!dir) {
    why = "not delegated by systemd (no trusted.delegate/user.delegate on " + h.own_dir +
          "; run as a unit with Delegate=yes for a subtree of its own)";
    return "";
  }
  auto leaf = enter_daemon_leaf(*dir);
  if (!leaf.ok()) {
    warnings.push_back("systemd delegated " + *dir + ", but the daemon cannot move into its leaf: " + leaf.status().message());
    why = "delegated, but unusable";
    return "";
  }
  h.own_dir = *dir;
  if (!h.controllers.empty()) {
    if (Status st = enable_in(*dir, h.controllers); !st.ok()) {
      warnings.push_back(st.message() + ": v2 controllers are not used");
      drop_v2_controllers(layout);
    }
  }
  std::string floor = set_memory_floor(*leaf, memory_min);
  why = "delegated by systemd (Delegate=yes): the daemon in " + *leaf + (floor.empty() ? "" : " (" + floor + ")") +
        ", sessions in " + *dir + "/sessions";
  return *dir;
}

}  // namespace

GroupDirs part_of(const GroupDirs& dirs, const char* part) {
  GroupDirs out;
  for (const auto& dir : dirs) out.push_back(dir + "/" + part);
  return out;
}

GroupDirs command_dirs(const GroupDirs& dirs) {
  GroupDirs command = part_of(dirs, kCommandPart);
  for (const auto& dir : command) {
    if (!path_exists(dir)) return dirs;  // an older daemon's group, or a part already removed
  }
  return command;
}

std::string escape_component(const std::string& name) {
  if (name.empty()) return "_";
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : name) {
    if (std::isalnum(c) || c == '_' || c == '-') {
      out.push_back(static_cast<char>(c));
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

Result<std::shared_ptr<CgroupTree>> CgroupTree::open(Layout layout, const std::string& instance,
                                                     std::vector<std::string>& warnings, uint64_t daemon_memory_min,
                                                     bool keep_populated) {
  const std::string name = escape_component(instance);
  std::string delegated_base, delegation;
  if (layout.v2 >= 0) {
    delegated_base = use_delegation(layout, daemon_memory_min, delegation, warnings);
  }
  if (delegated_base.empty() && layout.v2 >= 0 && !layout.hierarchies[layout.v2].controllers.empty()) {
    if (Status st = prepare_v2_own(layout.hierarchies[layout.v2], name, daemon_memory_min); !st.ok()) {
      warnings.push_back(st.message() + ": v2 controllers are not used");
      drop_v2_controllers(layout);
    }
  }
  std::vector<std::string> bases;
  for (size_t i = 0; i < layout.hierarchies.size(); ++i) {
    const bool delegated = static_cast<int>(i) == layout.v2 && !delegated_base.empty();
    bases.push_back(delegated ? delegated_base : layout.hierarchies[i].own_dir + "/" + name);
  }
  std::shared_ptr<CgroupTree> tree(new CgroupTree(std::move(layout), std::move(bases)));
  tree->delegation_ = std::move(delegation);
  for (size_t i = 0; i < tree->bases_.size(); ++i) {
    bool created = false;
    CODEXD_RETURN_IF_ERROR(tree->make_dir(i, tree->bases_[i], created));
    CODEXD_RETURN_IF_ERROR(tree->make_dir(i, tree->bases_[i] + "/sessions", created));
  }
  if (tree->layout_.v2 >= 0) tree->layout_.has_kill = path_exists(tree->bases_[tree->layout_.v2] + "/cgroup.kill");
  // A previous run of this daemon (same instance) may have left groups behind.
  for (const auto& dir : leftovers(tree->bases_[0])) {
    GroupDirs dirs;
    std::string relative = dir.substr(tree->bases_[0].size());
    for (const auto& base : tree->bases_) dirs.push_back(base + relative);
    if (keep_populated && tree->populated(dirs)) continue;
    tree->remove(dirs);
  }
  return tree;
}

Status CgroupTree::make_dir(size_t hierarchy, const std::string& dir, bool& created) const {
  created = ::mkdir(dir.c_str(), 0755) == 0;
  if (!created && errno != EEXIST) return ErrnoStatus("mkdir " + dir, errno);
  const Hierarchy& h = layout_.hierarchies[hierarchy];
  if (created && h.v2 && !h.controllers.empty()) {
    std::vector<std::string> wanted;
    for (const char* c : kV2Controllers) {
      if (std::find(h.controllers.begin(), h.controllers.end(), c) != h.controllers.end()) wanted.push_back(c);
    }
    CODEXD_RETURN_IF_ERROR(enable_in(dir, wanted));
  }
  return Status::Ok();
}

Result<GroupDirs> CgroupTree::ensure_agent(const std::string& agent, const ResourceLimits& budget, bool rewrite) {
  GroupDirs agent_dirs;
  bool created_any = false;
  for (size_t i = 0; i < bases_.size(); ++i) {
    agent_dirs.push_back(bases_[i] + "/sessions/" + escape_component(agent));
    bool created = false;
    CODEXD_RETURN_IF_ERROR(make_dir(i, agent_dirs[i], created));
    created_any = created_any || created;
  }
  if (created_any || rewrite) CODEXD_RETURN_IF_ERROR(apply_limits(layout_, agent_dirs, budget));
  return agent_dirs;
}

Result<GroupDirs> CgroupTree::create_leaf(const GroupDirs& agent_dirs, const std::string& leaf,
                                          const ResourceLimits& session) {
  GroupDirs dirs;
  for (const auto& agent_dir : agent_dirs) dirs.push_back(agent_dir + "/" + escape_component(leaf));
  for (size_t i = 0; i < dirs.size(); ++i) {
    if (::mkdir(dirs[i].c_str(), 0755) != 0) {
      Status st = ErrnoStatus("mkdir " + dirs[i], errno);
      try_remove(GroupDirs(dirs.begin(), dirs.begin() + static_cast<std::ptrdiff_t>(i)), false);
      return st;
    }
  }
  if (Status st = apply_limits(layout_, dirs, session); !st.ok()) {
    try_remove(dirs, false);
    return st;
  }
  for (const char* part : {kCommandPart, kKeeperPart}) {
    for (const auto& dir : part_of(dirs, part)) {
      if (::mkdir(dir.c_str(), 0755) != 0) {
        Status st = ErrnoStatus("mkdir " + dir, errno);
        try_remove(dirs, false);
        return st;
      }
    }
  }
  return dirs;
}

bool CgroupTree::populated(const GroupDirs& dirs) const {
  if (layout_.v2 >= 0) {
    auto events = read_small_file(dirs[layout_.v2] + "/cgroup.events");
    if (events) return keyed_value(*events, "populated").value_or(1) != 0;
  }
  return !pids_in(dirs[0]).empty();
}

void CgroupTree::signal(const GroupDirs& dirs, int sig) const {
  for (int pid : pids_in(dirs[0])) ::kill(pid, sig);
}

void CgroupTree::kill(const GroupDirs& dirs) const {
  if (layout_.has_kill && write_small_file(dirs[layout_.v2] + "/cgroup.kill", "1").ok()) return;
  if (layout_.freezer >= 0) {
    // Frozen, nothing can fork between reading the list and the kill; thawed, SIGKILL lands.
    const std::string& dir = dirs[layout_.freezer];
    write_small_file(dir + "/freezer.state", "FROZEN").ok();
    signal(GroupDirs{dir}, SIGKILL);
    write_small_file(dir + "/freezer.state", "THAWED").ok();
    return;
  }
  // Neither: kill what is listed until nothing new appears (a fork race may need a few rounds).
  for (int round = 0; round < 16; ++round) {
    auto pids = pids_in(dirs[0]);
    if (pids.empty()) return;
    for (int pid : pids) ::kill(pid, SIGKILL);
  }
}

void CgroupTree::remove(const GroupDirs& dirs) {
  kill(dirs);
  if (!try_remove(dirs, true)) {
    std::lock_guard lock(graveyard_mutex_);
    graveyard_.push_back(dirs);  // its dying processes still hold it: retried later
  }
}

bool CgroupTree::try_remove(const GroupDirs& dirs, bool with_agent) {
  bool all_gone = true;
  for (const auto& dir : dirs) {
    for (const char* part : {kCommandPart, kKeeperPart}) {
      if (::rmdir((dir + "/" + part).c_str()) != 0 && errno != ENOENT) all_gone = false;
    }
    if (::rmdir(dir.c_str()) != 0 && errno != ENOENT) all_gone = false;
  }
  if (all_gone && with_agent) {
    for (const auto& dir : dirs) ::rmdir(parent_of(dir).c_str());  // fails while it has other groups
  }
  return all_gone;
}

void CgroupTree::sweep() {
  std::vector<GroupDirs> pending;
  {
    std::lock_guard lock(graveyard_mutex_);
    pending.swap(graveyard_);
  }
  for (const auto& dirs : pending) remove(dirs);
}

void CgroupTree::remove_everything(bool keep_populated) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (const auto& dir : leftovers(bases_[0])) {
    GroupDirs dirs;
    std::string relative = dir.substr(bases_[0].size());
    for (const auto& base : bases_) dirs.push_back(base + relative);
    if (keep_populated && populated(dirs)) continue;
    kill(dirs);
    if (layout_.v2 >= 0) wait_unpopulated(dirs[layout_.v2], deadline);
    remove(dirs);
  }
  {
    std::lock_guard lock(graveyard_mutex_);
    graveyard_.clear();
  }
  // The tree itself goes too (a restart makes it again).
  for (const auto& base : bases_) {
    ::rmdir((base + "/sessions").c_str());
    ::rmdir(base.c_str());
  }
}

std::string CgroupTree::root() const { return bases_.empty() ? "" : bases_[0]; }

}  // namespace codexd::limits::cgroups
