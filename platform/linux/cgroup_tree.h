// The part of each cgroup hierarchy that codexd owns: <own>/codexd-<instance>/sessions/<agent>/
// <name>. The agent level holds the agent's budget (its sessions share it); the leaf holds one
// command. Creates groups with their limits, kills them whole, removes them (a group whose
// dying processes still hold it is retried later), and clears what a previous run left.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "platform/limits/limits.h"
#include "platform/linux/cgroup_layout.h"

namespace codexd::limits::cgroups {

// One group: its directory in each hierarchy (indexed like Layout::hierarchies).
using GroupDirs = std::vector<std::string>;

// A session group has two parts below its leaf, in every hierarchy: the command and all it
// starts in <leaf>/command, a durable session's shim in <leaf>/shim (cgroup v2 lets processes
// live only in leaves once controllers are enabled). Limits and accounting are on the leaf, so
// they cover both; signals and kills of the command reach <leaf>/command only, so the shim
// outlives them and reports the exit. A group an older daemon made has no parts.
inline constexpr const char* kCommandPart = "command";
inline constexpr const char* kKeeperPart = "shim";
GroupDirs part_of(const GroupDirs& dirs, const char* part);
// The command's part where the group has parts, else the group itself.
GroupDirs command_dirs(const GroupDirs& dirs);

class CgroupTree {
 public:
  // `instance` tells this daemon's tree from another's on the same machine. Warnings (a
  // controller that cannot be enabled) are appended to `warnings`.
  // Where systemd delegated the daemon's v2 cgroup (Delegate=yes), the daemon moves into its
  // daemon/ leaf (memory.min `daemon_memory_min`) and the tree is that cgroup itself
  // (cgroup_delegation.h); elsewhere it is <own>/codexd-<instance>.
  // A previous run's groups are removed, except, with `keep_populated`, those that still hold
  // processes (durable sessions whose shims a restarted daemon adopts).
  static Result<std::shared_ptr<CgroupTree>> open(Layout layout, const std::string& instance,
                                                  std::vector<std::string>& warnings,
                                                  uint64_t daemon_memory_min = uint64_t{64} << 20,
                                                  bool keep_populated = false);

  // The agent's directory in each hierarchy, made where missing; `budget` is written when the
  // directory is new or `rewrite` is set (the agent's budget changed).
  Result<GroupDirs> ensure_agent(const std::string& agent, const ResourceLimits& budget, bool rewrite);
  // A new leaf `leaf` under the agent's directories with `session` written, and its two parts;
  // nothing is left behind on failure. A leaf never gets controllers of its own: processes
  // live only in its parts, which have no limits.
  Result<GroupDirs> create_leaf(const GroupDirs& agent_dirs, const std::string& leaf, const ResourceLimits& session);
  // SIGKILL to every process of the group (its parts included), wherever it moved in the
  // process tree.
  void kill(const GroupDirs& dirs) const;
  // Whether a process is left in the group or its parts (v2 cgroup.events; without v2:
  // cgroup.procs).
  bool populated(const GroupDirs& dirs) const;
  // `signal` to every process of the group and its parts.
  void signal(const GroupDirs& dirs, int signal) const;
  // Kill, then remove the group (and its agent's directory when that is empty); a group that
  // dying processes still hold goes to the graveyard, retried by sweep().
  void remove(const GroupDirs& dirs);
  // rmdir (parts first) in every hierarchy, nothing else; false while a process still holds it.
  // `with_agent`: also the agent's directory, when this was its last group.
  bool try_remove(const GroupDirs& dirs, bool with_agent);
  // Retries the graveyard.
  void sweep();
  // Shutdown: kill and remove every group, waiting a little for dying processes; with
  // `keep_populated` (a restart that keeps sessions) groups that hold processes stay as they are.
  void remove_everything(bool keep_populated = false);

  const Layout& layout() const { return layout_; }
  const std::vector<std::string>& bases() const { return bases_; }
  std::string root() const;
  // How the daemon got its subtree, for the status: "delegated by systemd ...", or why not.
  const std::string& delegation() const { return delegation_; }

 private:
  CgroupTree(Layout layout, std::vector<std::string> bases) : layout_(std::move(layout)), bases_(std::move(bases)) {}
  Status enable_v2_controllers(const std::string& dir) const;
  Status make_dir(size_t hierarchy, const std::string& dir, bool& created) const;

  Layout layout_;
  std::vector<std::string> bases_;  // <own>/codexd-<instance> (or the delegated cgroup) per hierarchy
  std::string delegation_;
  // Removed, but not yet empty. A group may be destroyed on whichever thread drops the last
  // reference to its session, hence the lock.
  std::mutex graveyard_mutex_;
  std::vector<GroupDirs> graveyard_;
};

// An agent id or group name as one safe path component: [A-Za-z0-9_-] kept, the rest %XX, so
// that no name can look like an interface file ("memory.max") or climb ("..").
std::string escape_component(const std::string& name);

}  // namespace codexd::limits::cgroups
