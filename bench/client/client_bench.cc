// client_bench: wall time and minor page faults of whole processes, started round-robin so
// every case sees the same machine state (bench/client/run.sh drives it). For each case it
// prints one line, tab-separated:
//   NAME  MEDIAN_MS  MEDIAN_MINOR_FAULTS  RUNS  FAILED_RUNS
// Wall time is posix_spawn to wait4, faults are the child's ru_minflt from wait4. stdin,
// stdout and stderr are /dev/null. Asserts nothing.
//
//   client_bench --runs N [--warmup N] --case NAME [--env VAR=VALUE]... -- ARGV... [--case ...]
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

struct Case {
  std::string name;
  std::vector<std::string> env;  // environ with the case's VAR=VALUE overrides
  std::vector<std::string> argv;
  std::vector<double> wall_ms;
  std::vector<double> minor_faults;
  int failed = 0;
};

struct Sample {
  bool ok = false;
  double wall_ms = 0;
  double minor_faults = 0;
};

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

Sample run_once(Case& c) {
  auto argv = c_strings(c.argv);
  auto envp = c_strings(c.env);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  Sample sample;
  auto start = Clock::now();
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return sample;
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) return sample;
  sample.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  sample.minor_faults = static_cast<double>(usage.ru_minflt);
  sample.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return sample;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

std::vector<std::string> environment_with(const std::vector<std::string>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    bool overridden = std::any_of(overrides.begin(), overrides.end(),
                                  [&](const std::string& o) { return o.substr(0, o.find('=')) == name; });
    if (!overridden) env.push_back(entry);
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

int usage_error() {
  std::fprintf(stderr,
               "usage: client_bench --runs N [--warmup N] --case NAME [--env VAR=VALUE]... -- ARGV... [--case ...]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 0;
  int warmup = 2;
  std::vector<Case> cases;
  for (int i = 1; i < argc;) {
    std::string arg = argv[i];
    if ((arg == "--runs" || arg == "--warmup") && i + 1 < argc) {
      (arg == "--runs" ? runs : warmup) = std::atoi(argv[i + 1]);
      i += 2;
    } else if (arg == "--case" && i + 1 < argc) {
      Case c;
      c.name = argv[i + 1];
      i += 2;
      std::vector<std::string> overrides;
      while (i + 1 < argc && std::strcmp(argv[i], "--env") == 0) {
        overrides.push_back(argv[i + 1]);
        i += 2;
      }
      if (i >= argc || std::strcmp(argv[i], "--") != 0) return usage_error();
      for (++i; i < argc && std::strcmp(argv[i], "--case") != 0; ++i) c.argv.push_back(argv[i]);
      if (c.argv.empty()) return usage_error();
      c.env = environment_with(overrides);
      cases.push_back(std::move(c));
    } else {
      return usage_error();
    }
  }
  if (runs <= 0 || warmup < 0 || cases.empty()) return usage_error();

  for (int round = 0; round < warmup + runs; ++round) {
    for (auto& c : cases) {
      Sample sample = run_once(c);
      if (round < warmup) continue;
      if (!sample.ok) {
        ++c.failed;
        continue;
      }
      c.wall_ms.push_back(sample.wall_ms);
      c.minor_faults.push_back(sample.minor_faults);
    }
  }
  for (const auto& c : cases) {
    std::printf("%s\t%.3f\t%.0f\t%zu\t%d\n", c.name.c_str(), median(c.wall_ms), median(c.minor_faults), c.wall_ms.size(),
                c.failed);
  }
  return 0;
}
