// limits_bench: what a command's cgroup adds to a spawn. Medians over --iterations rounds,
// measured round-robin so that the ratios share the same machine state:
//   posix_spawn     posix_spawn + wait of /bin/true (the baseline)
//   spawn_process   codexd's spawn (clone(CLONE_VM|CLONE_VFORK) + child step) + wait
//   + cgroup        create the group (mkdir in each hierarchy, limits written), the child joins
//                   it before exec, wait, remove the group (kill + rmdir)
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
  std::vector<double> baseline, spawn, grouped;
  for (int i = 0; i < iterations; ++i) {
    auto t = Clock::now();
    posix_spawn_true();
    baseline.push_back(ms_since(t));

    t = Clock::now();
    spawn_and_wait(true_request());
    spawn.push_back(ms_since(t));

    t = Clock::now();
    codexd::limits::GroupRequest group_request{"bench", std::to_string(i), {}, {}};
    group_request.session.pids_max = 4096;
    group_request.session.memory_max = 1ull << 30;
    auto group = (*manager)->create(group_request);
    if (!group.ok()) {
      std::fprintf(stderr, "group: %s\n", group.status().message().c_str());
      return 1;
    }
    auto request = true_request();
    (*group)->prepare(request);
    spawn_and_wait(request);
    group->reset();  // kill + rmdir
    grouped.push_back(ms_since(t));
  }
  (*manager)->shutdown();
  const double b = median(baseline), s = median(spawn), g = median(grouped);
  std::printf("%d rounds, medians:\n", iterations);
  std::printf("  posix_spawn + wait            %8.3f ms   1.00x\n", b);
  std::printf("  spawn_process + wait          %8.3f ms   %.2fx\n", s, s / b);
  std::printf("  + cgroup create/attach/remove %8.3f ms   %.2fx   (+%.3f ms per command over spawn_process)\n", g,
              g / b, g - s);
  return 0;
}
