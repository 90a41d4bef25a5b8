// Takes mkdir and rmdir off a command's spawn. A worker thread keeps, for each of the few most
// recently used agents, a small stock of fresh groups: made in every hierarchy, with the
// limits that agent's last command had written, their cgroup.procs already open. A command
// whose limits match takes one; any other (first command of an agent, other limits) makes its
// group on the spot. A group is never used twice (memory.peak and pids.peak cannot be reset
// on every kernel, and a group must be empty): a finished one is killed at once, and the
// worker removes its directories (retrying while dying processes still hold it).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "platform/linux/cgroup_tree.h"

namespace codexd::limits::cgroups {

// A fresh, empty group and the cgroup.procs of its parts, open for writing: the command's
// child joins through `procs`, a durable session's shim through `keeper_procs`.
struct ReadyGroup {
  GroupDirs dirs;
  std::vector<UniqueFd> procs;
  std::vector<UniqueFd> keeper_procs;
};

struct PoolOptions {
  size_t depth = 2;       // groups kept ready per agent
  size_t max_agents = 8;  // agents with a stock (least recently used beyond it lose theirs)
};

class GroupPool {
 public:
  GroupPool(std::shared_ptr<CgroupTree> tree, PoolOptions options);
  ~GroupPool();  // stop()

  // A fresh group for a command of `agent`: from the stock when `budget` and `session` are
  // what it was made with, else made now.
  Result<ReadyGroup> take(const std::string& agent, const ResourceLimits& budget, const ResourceLimits& session);
  // Kills what is left of a group's command at once (a shim beside it ends by itself); its
  // directories are removed on the worker, retried while the shim is still there.
  void release(const std::string& agent, GroupDirs dirs);
  // Until released groups are removed (at most a few seconds for dying processes) and the
  // stock is full.
  void settle();
  // Ends the worker and removes the stock; later releases remove on the caller's thread.
  void stop();

  CgroupTree& tree() const { return *tree_; }

  struct Counts {
    uint64_t taken_ready = 0;  // from the stock
    uint64_t made_now = 0;     // made on the spot
  };
  Counts counts() const;

 private:
  struct Stock {
    ResourceLimits budget, session;  // what its groups were made with
    std::deque<ReadyGroup> ready;
    uint64_t last_use = 0;
    bool budget_written = false;
    bool refill_failed = false;  // stop trying until its next command
  };
  struct Dead {
    GroupDirs dirs;
    std::string agent;
  };

  Result<ReadyGroup> make_group(const std::string& agent, const ResourceLimits& budget, bool rewrite_budget,
                                const ResourceLimits& session);
  Stock& track(std::unique_lock<std::mutex>& lock, const std::string& agent, const ResourceLimits& budget,
               const ResourceLimits& session, bool& rewrite_budget);
  void run();
  bool remove_dead(std::unique_lock<std::mutex>& lock);
  bool refill_one(std::unique_lock<std::mutex>& lock);
  bool idle() const;

  std::shared_ptr<CgroupTree> tree_;
  const PoolOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable work_;     // the worker's wake-up
  std::condition_variable settled_;  // the worker ran out of work
  std::map<std::string, Stock> stocks_;
  std::vector<Dead> dead_;   // to remove
  std::vector<Dead> held_;   // still held by dying processes: retried
  uint64_t clock_ = 0, serial_ = 0;
  bool busy_ = false, stopping_ = false;
  Counts counts_;
  std::thread worker_;
};

}  // namespace codexd::limits::cgroups
