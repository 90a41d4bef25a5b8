// limits_bench: what a command's cgroup adds to a spawn. Medians over --iterations rounds,
// measured round-robin so that the ratios share the same machine state:
//   posix_spawn     posix_spawn + wait of /bin/true (the baseline)
//   spawn_process   codexd's spawn (clone(CLONE_VM|CLONE_VFORK) + child step) + wait
//   + cgroup        take the command's group (from the agent's stock of groups made ahead of
//                   time, cgroup_pool.h), the child joins it before exec, wait, release it
//                   (kill now; rmdir on the pool's worker)
//   unpooled        what every command paid before the pool (the same steps on the spot: mkdir
//                   of the agent's level and the group, limits, join, then kill and rmdir of both)
// and afterwards, on the same baseline, an agent's first command (no stock yet: mkdir in each
// hierarchy plus the agent's level, limits written, on the spot).
// Prints numbers and ratios; asserts nothing. Needs a usable cgroup (root, or a delegated tree).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "platform/linux/cgroup_manager.h"
#include "platform/linux/cgroup_tree.h"
#include "platform/posix/spawn.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void posix_spawn_true() {
  char arg0[] = "true";
  char* argv[] = {arg0, nullptr};
  pid_t pid = -1;
  if (posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, environ) != 0) std::abort();
  ::waitpid(pid, nullptr, 0);
}

codexd::posix::SpawnRequest true_request() {
  codexd::posix::SpawnRequest request;
  request.executable = "/bin/true";
  request.argv = {"true"};
  request.cwd = "/";
  return request;
}

void spawn_and_wait(const codexd::posix::SpawnRequest& request) {
  auto spawned = codexd::posix::spawn_process(request);
  if (!spawned.ok()) {
    std::fprintf(stderr, "spawn: %s\n", spawned.status().message().c_str());
    std::exit(1);
  }
  ::waitpid(spawned->pid, nullptr, 0);
}

// A round's wall time, and the part of it the parent spent on the group (before the spawn and
// after the wait), which a loaded machine disturbs less than the spawn.
struct Round {
  double total = 0, parent = 0;
};

// One command in its group: take, spawn, wait, release (what a session or run does).
Round grouped_round(codexd::limits::LimitsManager& manager, const std::string& agent) {
  const auto t = Clock::now();
  codexd::limits::GroupRequest group_request{agent, "", {}, {}};
  group_request.session.pids_max = 4096;
  group_request.session.memory_max = 1ull << 30;
  auto group = manager.create(group_request);
  if (!group.ok()) {
    std::fprintf(stderr, "group: %s\n", group.status().message().c_str());
    std::exit(1);
  }
  auto request = true_request();
  (*group)->prepare(request);
  const double before = ms_since(t);
  spawn_and_wait(request);
  const auto waited = Clock::now();
  group->reset();  // kill now, rmdir on the pool's worker
  return {ms_since(t), before + ms_since(waited)};
}

// The per-command path without the pool, on a tree of its own.
Round unpooled_round(codexd::limits::cgroups::CgroupTree& tree, int i) {
  const auto t = Clock::now();
  codexd::limits::ResourceLimits session;
  session.pids_max = 4096;
  session.memory_max = 1ull << 30;
  auto agent_dirs = tree.ensure_agent("bench", {}, false);
  auto dirs = agent_dirs.ok() ? tree.create_leaf(*agent_dirs, std::to_string(i), session) : agent_dirs;
  if (!dirs.ok()) {
    std::fprintf(stderr, "unpooled group: %s\n", dirs.status().message().c_str());
    std::exit(1);
  }
  auto request = true_request();
  std::vector<int> fds;
  for (const auto& dir : *dirs) fds.push_back(::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
  request.join_fds = fds;
  const double before = ms_since(t);
  spawn_and_wait(request);
  const auto waited = Clock::now();
  for (int fd : fds) ::close(fd);
  tree.kill(*dirs);
  tree.try_remove(*dirs, true);
  return {ms_since(t), before + ms_since(waited)};
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 300;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--iterations") == 0) iterations = std::atoi(argv[i + 1]);
  }
  codexd::limits::cgroups::CgroupOptions options;
  options.instance = "codexd-bench-" + std::to_string(::getpid());
  options.daemon_oom_score_adj.reset();
  auto manager = codexd::limits::cgroups::create_cgroup_manager(options);
  if (!manager.ok()) {
    std::fprintf(stderr, "no usable cgroup: %s\n", manager.status().message().c_str());
    return 1;
  }
  std::printf("limits: %s (%s)\n", codexd::limits::mechanism_name((*manager)->status().mechanism),
              (*manager)->status().reason.c_str());
  std::vector<std::string> warnings;
  auto layout = codexd::limits::cgroups::discover_layout();
  auto tree = layout.ok() ? codexd::limits::cgroups::CgroupTree::open(*layout, options.instance + "-unpooled", warnings)
                          : codexd::Result<std::shared_ptr<codexd::limits::cgroups::CgroupTree>>(layout.status());
  if (!tree.ok()) {
    std::fprintf(stderr, "no tree: %s\n", tree.status().message().c_str());
    return 1;
  }
  std::vector<double> baseline, spawn;
  std::vector<Round> grouped, unpooled, cold;
  for (int i = 0; i < iterations; ++i) {
    auto t = Clock::now();
    posix_spawn_true();
    baseline.push_back(ms_since(t));

    t = Clock::now();
    spawn_and_wait(true_request());
    spawn.push_back(ms_since(t));

    grouped.push_back(grouped_round(**manager, "bench"));
    unpooled.push_back(unpooled_round(**tree, i));
  }
  for (int i = 0; i < std::min(iterations, 100); ++i) {
    (*manager)->settle();  // the previous agent's stock is made: measure only this one
    cold.push_back(grouped_round(**manager, "cold-" + std::to_string(i)));
  }
  (*manager)->shutdown();
  (*tree)->remove_everything();
  const double b = median(baseline), s = median(spawn);
  std::printf("%d rounds, medians (wall time of the whole round; \"parent\": the group work before the spawn\n"
              "and after the wait, without the spawn itself):\n", iterations);
  std::printf("  posix_spawn + wait               %8.3f ms   1.00x\n", b);
  std::printf("  spawn_process + wait             %8.3f ms   %.2fx\n", s, s / b);
  auto report = [&](const char* name, const std::vector<Round>& rounds) {
    std::vector<double> total, parent;
    for (const auto& r : rounds) {
      total.push_back(r.total);
      parent.push_back(r.parent);
    }
    const double m = median(total);
    std::printf("  %-32s %8.3f ms   %.2fx   (+%.3f ms over posix_spawn; parent %.3f ms; %zu rounds)\n", name, m, m / b,
                m - b, median(parent), rounds.size());
  };
  report("+ cgroup, from the stock", grouped);
  report("+ cgroup, unpooled (before)", unpooled);
  report("+ cgroup, made now (1st command)", cold);
  return 0;
}
