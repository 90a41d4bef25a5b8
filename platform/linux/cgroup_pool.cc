#include "platform/linux/cgroup_pool.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

namespace codexd::limits::cgroups {
namespace {

// How often a group that dying processes still hold is tried again.
constexpr auto kRetryHeld = std::chrono::milliseconds(50);
// The worker's nice value (per thread on Linux).
constexpr int kWorkerNice = 10;
// settle() waits at most this long.
constexpr auto kSettleLimit = std::chrono::seconds(5);

Result<std::vector<UniqueFd>> open_procs(const GroupDirs& dirs) {
  std::vector<UniqueFd> procs;
  for (const auto& dir : dirs) {
    UniqueFd fd(::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd) return ErrnoStatus("open " + dir + "/cgroup.procs", errno);
    procs.push_back(std::move(fd));
  }
  return procs;
}

}  // namespace

GroupPool::GroupPool(std::shared_ptr<CgroupTree> tree, PoolOptions options)
    : tree_(std::move(tree)), options_(options) {
  worker_ = std::thread([this] { run(); });
}

GroupPool::~GroupPool() { stop(); }

Result<ReadyGroup> GroupPool::take(const std::string& agent, const ResourceLimits& budget,
                                   const ResourceLimits& session) {
  std::unique_lock lock(mutex_);
  bool rewrite_budget = false;
  Stock& stock = track(lock, agent, budget, session, rewrite_budget);
  if (!stock.ready.empty() && !rewrite_budget) {
    ReadyGroup group = std::move(stock.ready.front());
    stock.ready.pop_front();
    ++counts_.taken_ready;
    work_.notify_one();
    return group;
  }
  ++counts_.made_now;
  lock.unlock();
  auto made = make_group(agent, budget, rewrite_budget, session);
  work_.notify_one();
  return made;
}

// The agent's stock, made or brought up to this command's limits: groups made with other
// session limits are thrown away (never rewritten: a fresh group is the simple guarantee that
// nothing of an earlier setting is left); a changed budget is rewritten on the agent's level.
GroupPool::Stock& GroupPool::track(std::unique_lock<std::mutex>&, const std::string& agent,
                                   const ResourceLimits& budget, const ResourceLimits& session,
                                   bool& rewrite_budget) {
  Stock& stock = stocks_[agent];
  stock.last_use = ++clock_;
  stock.refill_failed = false;
  if (!(stock.session == session)) {
    for (auto& group : stock.ready) dead_.push_back({std::move(group.dirs), agent});
    stock.ready.clear();
    stock.session = session;
  }
  if (!stock.budget_written || !(stock.budget == budget)) {
    rewrite_budget = true;
    stock.budget = budget;
    stock.budget_written = true;
  }
  if (stocks_.size() > options_.max_agents) {
    auto oldest = stocks_.end();
    for (auto it = stocks_.begin(); it != stocks_.end(); ++it) {
      if (it->first != agent && (oldest == stocks_.end() || it->second.last_use < oldest->second.last_use)) oldest = it;
    }
    for (auto& group : oldest->second.ready) dead_.push_back({std::move(group.dirs), oldest->first});
    stocks_.erase(oldest);
  }
  return stock;
}

Result<ReadyGroup> GroupPool::make_group(const std::string& agent, const ResourceLimits& budget, bool rewrite_budget,
                                         const ResourceLimits& session) {
  std::string leaf;
  {
    std::lock_guard lock(mutex_);
    // The pid keeps a restarted daemon's names apart from the groups it adopted.
    leaf = "g" + std::to_string(::getpid()) + "-" + std::to_string(++serial_);
  }
  Result<GroupDirs> dirs = Unavailable("not made");
  // Twice: the worker may have removed the agent's directory (its last group went) just now.
  for (int attempt = 0; attempt < 2 && !dirs.ok(); ++attempt) {
    CODEXD_ASSIGN_OR_RETURN(GroupDirs agent_dirs, tree_->ensure_agent(agent, budget, rewrite_budget));
    dirs = tree_->create_leaf(agent_dirs, leaf, session);
  }
  if (!dirs.ok()) return dirs.status();
  auto procs = open_procs(part_of(*dirs, kCommandPart));
  auto keeper_procs = open_procs(part_of(*dirs, kKeeperPart));
  if (!procs.ok() || !keeper_procs.ok()) {
    tree_->try_remove(*dirs, false);
    return procs.ok() ? keeper_procs.status() : procs.status();
  }
  return ReadyGroup{std::move(dirs).value(), std::move(procs).value(), std::move(keeper_procs).value()};
}

void GroupPool::release(const std::string& agent, GroupDirs dirs) {
  const GroupDirs command = command_dirs(dirs);
  if (tree_->populated(command)) tree_->kill(command);
  std::unique_lock lock(mutex_);
  if (stopping_) {
    lock.unlock();
    tree_->remove(dirs);
    return;
  }
  dead_.push_back({std::move(dirs), agent});
  work_.notify_one();
}

void GroupPool::run() {
  // Below the threads that spawn commands: its mkdir/rmdir can wait, a command's spawn cannot.
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kWorkerNice);
  std::unique_lock lock(mutex_);
  auto next_retry = std::chrono::steady_clock::now();
  while (!stopping_) {
    if (!held_.empty() && std::chrono::steady_clock::now() >= next_retry) {
      for (auto& held : held_) dead_.push_back(std::move(held));
      held_.clear();
    }
    if (remove_dead(lock)) {
      next_retry = std::chrono::steady_clock::now() + kRetryHeld;
      continue;
    }
    if (refill_one(lock)) continue;
    if (idle()) settled_.notify_all();
    if (held_.empty()) {
      work_.wait(lock);
    } else {
      work_.wait_until(lock, next_retry);
    }
  }
  settled_.notify_all();
}

// Removes what was released (outside the lock); what dying processes still hold is retried.
bool GroupPool::remove_dead(std::unique_lock<std::mutex>& lock) {
  if (dead_.empty()) return false;
  std::vector<Dead> work;
  work.swap(dead_);
  std::vector<bool> with_agent;
  for (const auto& dead : work) with_agent.push_back(stocks_.count(dead.agent) == 0);
  busy_ = true;
  lock.unlock();
  std::vector<Dead> still_held;
  for (size_t i = 0; i < work.size(); ++i) {
    if (!tree_->try_remove(work[i].dirs, with_agent[i])) still_held.push_back(std::move(work[i]));
  }
  tree_->sweep();
  lock.lock();
  for (auto& held : still_held) held_.push_back(std::move(held));
  busy_ = false;
  return true;
}

// Makes one group for the first agent whose stock is short (outside the lock).
bool GroupPool::refill_one(std::unique_lock<std::mutex>& lock) {
  auto short_stock = stocks_.begin();
  while (short_stock != stocks_.end() &&
         (short_stock->second.refill_failed || short_stock->second.ready.size() >= options_.depth)) {
    ++short_stock;
  }
  if (short_stock == stocks_.end()) return false;
  const std::string agent = short_stock->first;
  const ResourceLimits budget = short_stock->second.budget, session = short_stock->second.session;
  busy_ = true;
  lock.unlock();
  auto made = make_group(agent, budget, false, session);
  lock.lock();
  busy_ = false;
  auto it = stocks_.find(agent);
  if (!made.ok()) {
    if (it != stocks_.end()) it->second.refill_failed = true;
  } else if (it != stocks_.end() && it->second.session == session && it->second.ready.size() < options_.depth) {
    it->second.ready.push_back(std::move(made).value());
  } else {
    dead_.push_back({std::move(made->dirs), agent});
  }
  return true;
}

bool GroupPool::idle() const {
  if (busy_ || !dead_.empty() || !held_.empty()) return false;
  for (const auto& [agent, stock] : stocks_) {
    if (!stock.refill_failed && stock.ready.size() < options_.depth) return false;
  }
  return true;
}

void GroupPool::settle() {
  std::unique_lock lock(mutex_);
  work_.notify_one();
  settled_.wait_until(lock, std::chrono::steady_clock::now() + kSettleLimit, [this] { return stopping_ || idle(); });
}

void GroupPool::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  if (worker_.joinable()) worker_.join();
  std::vector<Dead> left;
  std::map<std::string, Stock> stocks;
  {
    std::lock_guard lock(mutex_);
    left.swap(dead_);
    for (auto& held : held_) left.push_back(std::move(held));
    held_.clear();
    stocks.swap(stocks_);
  }
  for (auto& [agent, stock] : stocks) {
    for (auto& group : stock.ready) {
      group.procs.clear();
      group.keeper_procs.clear();
      tree_->try_remove(group.dirs, true);
    }
  }
  for (const auto& dead : left) tree_->remove(dead.dirs);
}

GroupPool::Counts GroupPool::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

}  // namespace codexd::limits::cgroups
