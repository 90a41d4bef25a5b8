#include "tests/support/test_daemon.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <grp.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "codexd/api_constants.h"
#include "tests/support/test_stage.h"
#include "tests/support/wait_exit.h"

extern char** environ;

namespace codexd::testing {
namespace {

}  // namespace

// A datagram socket playing systemd's NOTIFY_SOCKET: the daemon says READY=1 on it.
struct NotifySocket {
  int fd = -1;
  std::string path;
  explicit NotifySocket(const std::string& dir) {
    path = dir + "/notify.sock";
    fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  }
  ~NotifySocket() {
    if (fd >= 0) ::close(fd);
    ::unlink(path.c_str());
  }
  // Waits for a datagram containing READY=1 or for the daemon to die.
  bool wait_ready(pid_t pid, std::chrono::seconds guard) {
    auto limit = std::chrono::steady_clock::now() + guard;
    while (std::chrono::steady_clock::now() < limit) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 200) > 0) {
        char buf[4096];
        ssize_t n = ::recv(fd, buf, sizeof buf - 1, 0);
        if (n > 0 && std::string(buf, static_cast<size_t>(n)).find("READY=1") != std::string::npos) return true;
      }
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) return false;  // died during start-up
    }
    return false;
  }
  // Drops every notification received so far.
  void drain() {
    char buf[4096];
    while (::recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0) {
    }
  }
};

std::string TestDaemon::codexd_binary() { return staged_program("codexd"); }
std::string TestDaemon::codexctl_binary() { return staged_program("codexctl"); }

TestDaemon::TestDaemon(TestDaemonOptions options)
    : options_(std::move(options)),
      temp_("codexd-it", TempLocation::kTmp, 0755),  // other test users must reach the workspace
      dir_(temp_.path()) {
  workspace_ = dir_ + "/ws";
  std::filesystem::create_directories(workspace_);
  ::chmod(workspace_.c_str(), 0777);
  socket_ = dir_ + "/run/codexd.sock";
  audit_log_ = dir_ + "/audit.log";
  log_path_ = dir_ + "/codexd.log";
  std::filesystem::create_directories(dir_ + "/rules");
  if (!options_.rules.empty()) std::ofstream(dir_ + "/rules/test.rules") << options_.rules;

  std::ofstream config(dir_ + "/codexd.toml");
  config << "[daemon]\n";
  config << "mode = \"" << (options_.system_mode ? "system" : "user") << "\"\n";
  config << "listen = \"unix:" << socket_ << "\"\n";
  config << "log_level = \"debug\"\n";
  if (!options_.socket_mode.empty()) config << "socket_mode = \"" << options_.socket_mode << "\"\n";
  if (!options_.socket_dir_mode.empty()) config << "socket_dir_mode = \"" << options_.socket_dir_mode << "\"\n";
  if (options_.daemon_config.find("state_dir") == std::string::npos) {
    config << "state_dir = \"" << dir_ << "/state\"\n";
  }
  config << options_.daemon_config << "\n";
  config << "[policy]\n";
  config << "rules_dirs = [\"" << dir_ << "/rules\"]\n";
  config << "approval_policy = \"" << options_.approval_policy << "\"\n";
  config << "amend_file = \"" << dir_ << "/rules/amend.rules\"\n";
  if (!options_.include_default_rules) config << "include_default_rules = false\n";
  config << "[sandbox]\n";
  config << "mode = \"" << options_.sandbox_mode << "\"\n";
  if (options_.sandbox_config.find("private_tmp_dir") == std::string::npos) {
    config << "private_tmp_dir = \"" << private_tmp_base() << "\"\n";
  }
  config << options_.sandbox_config << "\n";
  config << "[audit]\n";
  config << "log_file = \"" << audit_log_ << "\"\n";
  config << options_.extra_config << "\n";
  config.close();

  launch();
}

void TestDaemon::launch() {
  notify_.reset();  // the same path: the old socket goes first
  notify_ = std::make_unique<NotifySocket>(dir_);
  NotifySocket& notify = *notify_;
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "NOTIFY_SOCKET=", 14) != 0 && std::strncmp(*e, "LISTEN_", 7) != 0 &&
        std::strncmp(*e, "HOME=", 5) != 0) {
      env.emplace_back(*e);
    }
  }
  env.push_back("NOTIFY_SOCKET=" + notify.path);
  // A home of its own: the login shells the tests run must not read the machine's dotfiles
  // (root's .bashrc here runs `pyenv init`, 0.9 s a shell) nor leave anything in them.
  bool home_given = false;
  for (const auto& e : options_.env) home_given = home_given || e.rfind("HOME=", 0) == 0;
  if (!home_given) {
    std::filesystem::create_directories(dir_ + "/home");
    env.push_back("HOME=" + dir_ + "/home");
  }
  for (const auto& e : options_.env) env.push_back(e);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string binary = codexd_binary();
  std::string config_path = dir_ + "/codexd.toml";
  std::vector<char*> argv = {binary.data(), const_cast<char*>("--config"), config_path.data(), nullptr};

  const pid_t test_pid = ::getpid();
  const int cgroup_procs =
      options_.start_in_cgroup.empty() ? -1 : ::open((options_.start_in_cgroup + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  pid_ = ::fork();
  if (pid_ == 0) {
    if (cgroup_procs >= 0 && ::write(cgroup_procs, "0", 1) != 1) _exit(126);
    // Appended: a restarted daemon's log follows its predecessor's.
    int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(log, 1);
    ::dup2(log, 2);
    ::setpgid(0, 0);
    // A test killed by its timeout must not leave a daemon (and its sessions) behind.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != test_pid) _exit(127);
    ::execve(binary.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  if (cgroup_procs >= 0) ::close(cgroup_procs);
  ready_ = notify.wait_ready(pid_, std::chrono::seconds(30));
}

TestDaemon::~TestDaemon() {
  if (!stopped_) stop();
  // Then temp_ removes the directory with everything in it.
}

std::string TestDaemon::daemon_log() const { return read_text_file(log_path_); }

std::shared_ptr<grpc::Channel> TestDaemon::channel() const {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 * 1024 * 1024);
  return grpc::CreateCustomChannel("unix:" + socket_, grpc::InsecureChannelCredentials(), args);
}

void TestDaemon::label(grpc::ClientContext& context, const std::string& agent_id) {
  context.AddMetadata(api::kAgentIdMetadataKey, agent_id);
}

namespace {

// A daemon that has not exited this long after its signal hangs. What each of its threads waits
// in goes to stderr (gdb's backtraces when gdb is installed, /proc's wchan and kernel stack
// always), then it is killed: the test fails with a diagnosis instead of a ctest timeout.
constexpr std::chrono::seconds kStopGuard{45};

void report_hang(pid_t pid) {
  std::fprintf(stderr, "codexd (pid %d) did not exit within %lld s of its signal; its threads:\n", pid,
               static_cast<long long>(kStopGuard.count()));
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    auto read = [&](const char* name) {
      std::ifstream in(task.path() / name);
      std::stringstream text;
      text << in.rdbuf();
      return text.str();
    };
    std::fprintf(stderr, "-- thread %s %s   waits in %s\n%s", task.path().filename().c_str(), read("comm").c_str(),
                 read("wchan").c_str(), read("stack").c_str());
  }
  if (::access("/usr/bin/gdb", X_OK) == 0) {
    const std::string gdb = "timeout 30 /usr/bin/gdb -p " + std::to_string(pid) +
                            " -batch -ex 'thread apply all bt' >&2 2>/dev/null";
    if (std::system(gdb.c_str()) != 0) std::fprintf(stderr, "(gdb could not attach)\n");
  }
  std::fflush(stderr);
}

// `log` is the daemon's log, whose end (the shutdown watchdog's lines) is printed with the threads.
int wait_daemon_exit(pid_t pid, const std::function<std::string()>& log) {
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kStopGuard).count()));
    ::close(pidfd);
    if (ready == 0) {
      report_hang(pid);
      const std::string text = log();
      const size_t tail = text.size() > 8192 ? text.size() - 8192 : 0;
      std::fprintf(stderr, "-- the end of its log:\n%s\n", text.substr(tail).c_str());
      std::fflush(stderr);
      ::kill(pid, SIGKILL);
    }
  }
  return wait_exit_code(pid);
}

}  // namespace

int TestDaemon::stop() {
  if (stopped_ || pid_ <= 0) return -1;
  stopped_ = true;
  ::kill(pid_, SIGTERM);
  return wait_daemon_exit(pid_, [this] { return daemon_log(); });
}

int TestDaemon::stop_with(int signal) {
  if (stopped_ || pid_ <= 0) return -1;
  stopped_ = true;
  ::kill(pid_, signal);
  return wait_daemon_exit(pid_, [this] { return daemon_log(); });
}

int TestDaemon::crash() {
  if (stopped_ || pid_ <= 0) return -1;
  stopped_ = true;
  ::kill(pid_, SIGKILL);  // the daemon alone, not its process group
  return wait_exit_code(pid_);
}

bool TestDaemon::signal_and_wait_ready(int signal) {
  if (stopped_ || pid_ <= 0 || !notify_) return false;
  notify_->drain();
  ::kill(pid_, signal);
  return notify_->wait_ready(pid_, std::chrono::seconds(30));
}

bool TestDaemon::restart() {
  if (!stopped_) stop();
  stopped_ = false;
  ready_ = false;
  pid_ = -1;
  launch();
  return started();
}

ProcessResult TestDaemon::codexctl(const std::vector<std::string>& args, const std::string& stdin_data,
                                   std::optional<uid_t> as_uid) const {
  std::vector<std::string> argv = {codexctl_binary(), "--socket", socket_};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, stdin_data, as_uid);
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& stdin_data, std::optional<uid_t> as_uid,
                          const std::vector<std::string>& extra_env) {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC)) return {};
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  for (const auto& e : extra_env) env.push_back(e);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    if (as_uid) {
      ::setgroups(0, nullptr);
      if (::setgid(*as_uid) != 0 || ::setuid(*as_uid) != 0) _exit(126);
    }
    ::execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  std::thread writer([&] {
    size_t off = 0;
    while (off < stdin_data.size()) {
      ssize_t n = ::write(in[1], stdin_data.data() + off, stdin_data.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    ::close(in[1]);
  });
  ProcessResult result;
  auto drain = [](int fd, std::string& sink) {
    char buf[65536];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) sink.append(buf, static_cast<size_t>(n));
    ::close(fd);
  };
  std::thread err_reader([&] { drain(err[0], result.err); });
  drain(out[0], result.out);
  err_reader.join();
  writer.join();
  result.exit_code = wait_exit_code(pid);
  return result;
}

}  // namespace codexd::testing
