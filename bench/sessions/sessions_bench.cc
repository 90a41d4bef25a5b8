// sessions_bench: the cost of durable sessions, against a codexd it starts itself.
//   memory    N idle sessions (half pipes, half TTY; `sleep`): the daemon's RSS growth plus
//             every shim's RSS and PSS, per session. The command itself is not counted.
//   adoption  time from exec of codexd to its first ListSessions answer, with an empty state
//             directory (the baseline) and after a SIGKILL with N live sessions to adopt.
// Medians over --runs; prints numbers and ratios, asserts nothing.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "codexd/v1/exec.grpc.pb.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
namespace v1 = codexd::v1;

struct Options {
  std::string codexd;
  std::string dir;  // a fresh directory: config, state, socket, workspace
  int sessions = 100;
  int runs = 5;
};

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Rss and Pss of a process in KiB (/proc/PID/smaps_rollup).
struct Memory {
  long rss_kib = 0;
  long pss_kib = 0;
};

Memory memory_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps_rollup");
  Memory m;
  std::string line;
  while (std::getline(in, line)) {
    long value = 0;
    if (std::sscanf(line.c_str(), "Rss: %ld kB", &value) == 1) m.rss_kib = value;
    if (std::sscanf(line.c_str(), "Pss: %ld kB", &value) == 1) m.pss_kib = value;
  }
  return m;
}

// The shims: processes named codexd-shim whose parent is `daemon`.
std::vector<pid_t> shims_of(pid_t daemon) {
  std::vector<pid_t> out;
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  while (dirent* e = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    const std::string comm = line.substr(open + 1, close - open - 1);
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (comm == "codexd-shim" && ppid == daemon) out.push_back(pid);
  }
  ::closedir(proc);
  return out;
}

class Daemon {
 public:
  explicit Daemon(const Options& o) : o_(o) {}
  ~Daemon() { stop(SIGTERM); }

  std::string socket() const { return o_.dir + "/run/codexd.sock"; }

  // Starts codexd and returns the milliseconds until it answered a ListSessions.
  double start() {
    const std::string config = o_.dir + "/codexd.toml";
    std::vector<std::string> argv = {o_.codexd, "--config", config};
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string log = o_.dir + "/codexd.log";
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const auto t0 = Clock::now();
    if (posix_spawn(&pid_, a[0], &actions, nullptr, a.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    if (pid_ <= 0) return -1;
    // A raw connect first: a gRPC channel to a socket that is not there yet backs off for a
    // second, which would be measured instead of the daemon.
    while (!socket_accepts()) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    stub_ = v1::Exec::NewStub(grpc::CreateChannel("unix:" + socket(), grpc::InsecureChannelCredentials()));
    for (;;) {
      grpc::ClientContext ctx;
      v1::ListSessionsResponse response;
      if (stub_->ListSessions(&ctx, v1::ListSessionsRequest(), &response).ok()) {
        listed_ = response.sessions_size();
        return ms_since(t0);
      }
    }
  }

  int listed() const { return listed_; }
  pid_t pid() const { return pid_; }
  v1::Exec::Stub& stub() { return *stub_; }

  void stop(int signal) {
    if (pid_ <= 0) return;
    stub_.reset();
    ::kill(pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  bool socket_accepts() const {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket().c_str());
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
  }

  const Options& o_;
  pid_t pid_ = -1;
  int listed_ = 0;
  std::unique_ptr<v1::Exec::Stub> stub_;
};

void write_config(const Options& o) {
  for (const char* sub : {"/ws", "/rules", "/state"}) std::filesystem::create_directories(o.dir + sub);
  std::ofstream config(o.dir + "/codexd.toml");
  config << "[daemon]\nmode = \"user\"\nlisten = \"unix:" << o.dir << "/run/codexd.sock\"\nlog_level = \"info\"\n"
         << "state_dir = \"" << o.dir << "/state\"\n"
         << "[policy]\nrules_dirs = [\"" << o.dir << "/rules\"]\napproval_policy = \"never\"\n"
         << "[sandbox]\nmode = \"danger-full-access\"\n"
         << "[exec]\nmax_sessions = " << std::max(64, o.sessions + 8) << "\n";
}

// "sessions: adopted N session(s) from the previous daemon in X ms" lines of the daemon log.
std::vector<double> adoption_times_logged(const std::string& log) {
  std::ifstream in(log);
  std::vector<double> out;
  std::string line;
  while (std::getline(in, line)) {
    const auto at = line.find("from the previous daemon in ");
    if (at != std::string::npos) out.push_back(std::atof(line.c_str() + at + std::strlen("from the previous daemon in ")));
  }
  return out;
}

bool start_sessions(Daemon& daemon, const Options& o) {
  for (int i = 0; i < o.sessions; ++i) {
    v1::ExecCommandRequest request;
    request.add_argv("sleep");
    request.add_argv("100000");
    request.set_workdir(o.dir + "/ws");
    request.set_yield_time_ms(0);
    request.set_tty(i % 2 == 1);
    grpc::ClientContext ctx;
    v1::ExecResult result;
    grpc::Status st = daemon.stub().ExecCommand(&ctx, request, &result);
    if (!st.ok() || !result.has_session_id()) {
      std::fprintf(stderr, "session %d: %s\n", i, st.error_message().c_str());
      return false;
    }
  }
  return true;
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--codexd") o.codexd = v;
    else if (k == "--dir") o.dir = v;
    else if (k == "--sessions") o.sessions = std::atoi(v.c_str());
    else if (k == "--runs") o.runs = std::atoi(v.c_str());
    else return false;
  }
  return !o.codexd.empty() && !o.dir.empty() && o.sessions > 0 && o.runs > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr, "usage: sessions_bench --codexd BIN --dir FRESH_DIR [--sessions N] [--runs R]\n");
    return 2;
  }
  write_config(o);
  Daemon daemon(o);

  // Baseline start-up: nothing to adopt.
  std::vector<double> empty_starts;
  for (int r = 0; r < o.runs; ++r) {
    const double ms = daemon.start();
    if (ms < 0) {
      std::fprintf(stderr, "codexd did not start; see %s/codexd.log\n", o.dir.c_str());
      return 1;
    }
    empty_starts.push_back(ms);
    if (r + 1 < o.runs) daemon.stop(SIGTERM);
  }

  // Memory of N idle sessions.
  const Memory before = memory_of(daemon.pid());
  if (!start_sessions(daemon, o)) return 1;
  const Memory after = memory_of(daemon.pid());
  const auto shims = shims_of(daemon.pid());
  long shim_rss = 0, shim_pss = 0;
  for (pid_t s : shims) {
    const Memory m = memory_of(s);
    shim_rss += m.rss_kib;
    shim_pss += m.pss_kib;
  }
  const double n = o.sessions;
  const double daemon_kib = static_cast<double>(after.rss_kib - before.rss_kib) / n;
  std::printf("codexd durable sessions bench (%ld CPUs, %d sessions, %d runs)\n", sysconf(_SC_NPROCESSORS_ONLN), o.sessions,
              o.runs);
  std::printf("memory per idle session (%zu shims found):\n", shims.size());
  std::printf("  daemon RSS growth     %8.1f KiB  (%ld -> %ld KiB for all)\n", daemon_kib, before.rss_kib, after.rss_kib);
  std::printf("  shim RSS              %8.1f KiB\n", static_cast<double>(shim_rss) / n);
  std::printf("  shim PSS              %8.1f KiB  (shared libraries split among the shims)\n", static_cast<double>(shim_pss) / n);
  std::printf("  total (RSS)           %8.1f KiB = %.2f MiB   (PSS: %.2f MiB)\n", daemon_kib + static_cast<double>(shim_rss) / n,
              (daemon_kib + static_cast<double>(shim_rss) / n) / 1024, (daemon_kib + static_cast<double>(shim_pss) / n) / 1024);

  // Adoption after a crash, N sessions each time.
  std::vector<double> adopt_starts;
  int listed = 0;
  for (int r = 0; r < o.runs; ++r) {
    daemon.stop(SIGKILL);
    const double ms = daemon.start();
    if (ms < 0) return 1;
    adopt_starts.push_back(ms);
    listed = daemon.listed();
  }
  const double base = median(empty_starts), adopt = median(adopt_starts);
  const double inside = median(adoption_times_logged(o.dir + "/codexd.log"));
  std::printf("start to first ListSessions answer (median of %d):\n", o.runs);
  std::printf("  empty state           %8.1f ms  (baseline)\n", base);
  std::printf("  %3d sessions to adopt %8.1f ms  (%d listed; x%.2f the baseline, +%.2f ms per session)\n", o.sessions, adopt,
              listed, adopt / base, (adopt - base) / n);
  std::printf("  of which adoption     %8.1f ms  (the daemon's own log: %.2f ms per session)\n", inside, inside / n);
  daemon.stop(SIGTERM);  // a plain stop ends the sessions
  return listed == o.sessions ? 0 : 1;
}
