#include "platform/linux/cgroup_manager.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/lexical_path.h"
#include "base/unique_fd.h"
#include "platform/linux/cgroup_delegation.h"
#include "platform/linux/cgroup_files.h"
#include "platform/linux/cgroup_limits.h"
#include "platform/linux/cgroup_pool.h"
#include "platform/linux/cgroup_tree.h"

namespace codexd::limits::cgroups {
namespace {

// One command's cgroup; destroying it kills what is left, and the pool removes the directories.
class CgroupGroup : public ResourceGroup {
 public:
  CgroupGroup(std::shared_ptr<GroupPool> pool, std::string agent, ReadyGroup group, ResourceLimits effective,
              std::optional<int> child_oom_score)
      : pool_(std::move(pool)),
        agent_(std::move(agent)),
        dirs_(std::move(group.dirs)),
        command_dirs_(command_dirs(dirs_)),
        procs_(std::move(group.procs)),
        keeper_procs_(std::move(group.keeper_procs)),
        effective_(effective),
        child_oom_score_(child_oom_score) {}
  ~CgroupGroup() override {
    procs_.clear();
    keeper_procs_.clear();
    if (!kept_) pool_->release(agent_, std::move(dirs_));
  }
  void keep_for_next_daemon() override { kept_ = true; }
  std::string place() const override {
    const std::string& base = pool_->tree().bases().at(0);
    return dirs_.at(0).substr(base.size() + 1);  // "sessions/<agent>/<leaf>"
  }

  void prepare(posix::SpawnRequest& request) const override {
    for (const auto& fd : procs_) request.join_fds.push_back(fd.get());
    request.oom_score_adj = child_oom_score_;
  }
  std::vector<int> keeper_join_fds() const override {
    std::vector<int> fds;
    for (const auto& fd : keeper_procs_) fds.push_back(fd.get());
    return fds;
  }
  void started(pid_t) override {  // joined: the children had their copies
    procs_.clear();
    keeper_procs_.clear();
  }
  // The command's part only: the shim beside it must live on to report the exit.
  Status signal_all(int signal) override {
    pool_->tree().signal(command_dirs_, signal);
    return Status::Ok();
  }
  Status kill_all() override {
    pool_->tree().kill(command_dirs_);
    return Status::Ok();
  }
  ResourceUsage usage() const override { return read_usage(pool_->tree().layout(), dirs_); }
  LimitHit limit_hit() const override { return read_limit_hit(pool_->tree().layout(), dirs_); }
  const ResourceLimits& effective() const override { return effective_; }

 private:
  std::shared_ptr<GroupPool> pool_;
  std::string agent_;
  GroupDirs dirs_;          // the leaf: limits and accounting
  GroupDirs command_dirs_;  // where the command runs: signals and kills (the leaf in an older group)
  std::vector<UniqueFd> procs_;
  std::vector<UniqueFd> keeper_procs_;
  ResourceLimits effective_;
  std::optional<int> child_oom_score_;
  bool kept_ = false;
};

Mechanism mechanism_of(const Layout& layout) {
  bool any_v1 = false;
  for (const auto& h : layout.hierarchies) any_v1 = any_v1 || !h.v2;
  if (layout.v2 < 0) return Mechanism::kCgroupV1;
  return any_v1 ? Mechanism::kCgroupHybrid : Mechanism::kCgroupV2;
}

std::vector<std::string> controller_list(const Layout& layout) {
  std::vector<std::string> out;
  for (const char* c : {"pids", "memory", "cpu", "cpuacct", "freezer", "io"}) {
    int i = layout.index_of(c);
    if (i >= 0) out.push_back(std::string(c) + (layout.hierarchies[i].v2 ? " (v2)" : " (v1)"));
  }
  return out;
}

class CgroupManager : public LimitsManager {
 public:
  CgroupManager(std::shared_ptr<CgroupTree> tree, MechanismStatus status, std::optional<int> child_oom_score)
      : tree_(std::move(tree)), status_(std::move(status)), child_oom_score_(child_oom_score) {}

  ~CgroupManager() override { pool_->stop(); }

  Result<std::unique_ptr<ResourceGroup>> create(const GroupRequest& request) override {
    CODEXD_ASSIGN_OR_RETURN(ReadyGroup group, pool_->take(request.agent, request.agent_budget, request.session));
    ResourceLimits effective = tighter(request.session, request.agent_budget);
    return std::unique_ptr<ResourceGroup>(
        new CgroupGroup(pool_, request.agent, std::move(group), effective, child_oom_score_));
  }
  Result<std::unique_ptr<ResourceGroup>> adopt(const AdoptedGroup& adopted) override {
    if (adopted.place.empty()) return LimitsManager::adopt(adopted);  // made without a cgroup
    CODEXD_ASSIGN_OR_RETURN(GroupDirs dirs, adopted_dirs(adopted.place));
    auto group = std::unique_ptr<ResourceGroup>(
        new CgroupGroup(pool_, adopted.agent, ReadyGroup{std::move(dirs), {}, {}}, adopted.effective, child_oom_score_));
    group->started(adopted.leader);
    return group;
  }
  const MechanismStatus& status() const override { return status_; }
  void shutdown() override {
    pool_->stop();
    tree_->remove_everything();
  }
  void shutdown_keeping_running() override {
    pool_->stop();
    tree_->remove_everything(/*keep_populated=*/true);
  }
  void settle() override { pool_->settle(); }
  std::string kill_file() const override {
    const Layout& layout = tree_->layout();
    if (layout.v2 < 0 || !layout.has_kill) return {};
    return tree_->bases()[static_cast<size_t>(layout.v2)] + "/sessions/cgroup.kill";
  }

 private:
  // "sessions/<agent>/<leaf>" under every hierarchy's base, each an existing directory: a
  // record names nothing else (it is the daemon's own file, but a stale or edited one must
  // not hand over another cgroup).
  Result<GroupDirs> adopted_dirs(const std::string& place) const {
    // Three components, none empty, "." or "..": normalizing changes nothing.
    const std::string rooted = "/" + place;
    const bool shaped = normalize_lexically(rooted) == rooted && path_depth(rooted) == 3 && rooted.rfind("/sessions/", 0) == 0;
    if (!shaped) return InvalidArgument("not a session group of this daemon: \"" + place + "\"");
    GroupDirs dirs;
    for (const std::string& base : tree_->bases()) {
      struct stat st {};
      const std::string dir = base + "/" + place;
      if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return NotFound("cgroup " + dir + " is gone");
      dirs.push_back(dir);
    }
    return dirs;
  }

  std::shared_ptr<CgroupTree> tree_;
  std::shared_ptr<GroupPool> pool_ = std::make_shared<GroupPool>(tree_, PoolOptions{});
  MechanismStatus status_;
  std::optional<int> child_oom_score_;
};

// User mode: the daemon in a transient scope of the user's systemd with Delegate=yes, when
// asked to or when its own cgroup is not writable. Returns the layout to use.
Result<Layout> user_scope(const CgroupOptions& options, Layout layout) {
  using Scope = CgroupOptions::SystemdScope;
  if (options.systemd_scope == Scope::kNever || layout.v2 < 0) return layout;
  const std::string& own = layout.hierarchies[layout.v2].own_dir;
  if (delegated_by_systemd(own)) return layout;  // already in one (a restart inside it)
  if (options.systemd_scope == Scope::kIfNotWritable && ::access(own.c_str(), W_OK) == 0) return layout;
  const std::string unit = escape_component(options.instance) + "-" + std::to_string(::getpid()) + ".scope";
  if (Status st = move_into_delegated_scope(unit, options.systemd_timeout_ms); !st.ok()) {
    return Unavailable("user mode: no delegated cgroup from systemd for " + unit + " (" + st.message() +
                       "); the daemon's own cgroup " + own +
                       (options.systemd_scope == Scope::kAlways ? " is not used (limits.systemd_scope = \"always\")"
                                                                 : " is not writable"));
  }
  return discover_layout();
}

}  // namespace

Result<std::unique_ptr<LimitsManager>> create_cgroup_manager(const CgroupOptions& options) {
  CODEXD_ASSIGN_OR_RETURN(Layout found, discover_layout());
  CODEXD_ASSIGN_OR_RETURN(Layout layout, user_scope(options, std::move(found)));
  MechanismStatus status;
  CODEXD_ASSIGN_OR_RETURN(auto tree, CgroupTree::open(std::move(layout), options.instance, status.warnings,
                                                      options.daemon_memory_min, options.keep_populated_groups));
  const Layout& used = tree->layout();
  if (used.memory < 0 && used.pids < 0) {
    return Unavailable("neither the memory nor the pids controller is usable (" + describe(used) + ")");
  }
  status.mechanism = mechanism_of(used);
  status.reason = describe(used) + (tree->delegation().empty() ? "" : "; " + tree->delegation());
  status.controllers = controller_list(used);
  status.root = tree->root();
  status.whole_tree_kill = true;
  status.accounting = used.memory >= 0 || used.cpuacct >= 0;
  std::optional<int> child_oom_score;
  if (options.daemon_oom_score_adj &&
      write_small_file("/proc/self/oom_score_adj", std::to_string(*options.daemon_oom_score_adj)).ok()) {
    child_oom_score = 0;  // commands must not inherit the daemon's protection
  }
  return std::unique_ptr<LimitsManager>(new CgroupManager(std::move(tree), std::move(status), child_oom_score));
}

}  // namespace codexd::limits::cgroups
