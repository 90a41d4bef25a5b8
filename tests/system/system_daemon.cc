#include "tests/system/system_daemon.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/test_stage.h"
#include "tests/support/wait_exit.h"

extern char** environ;

namespace codexd::testing {

std::string rpc_client_binary() { return staged_program("codexd_system_rpc"); }

SystemDaemon::SystemDaemon(const std::string& dir, DaemonLaunch launch) : dir_(dir) {
  config_path_ = dir_ + "/codexd.toml";
  log_path_ = dir_ + "/codexd.log";
  notify_path_ = dir_ + "/notify.sock";
  if (!launch.config.empty()) {
    std::ofstream(config_path_) << launch.config;
    ::chmod(config_path_.c_str(), 0644);
  }

  // systemd's NOTIFY_SOCKET: a datagram socket; writable by a daemon that runs as a user.
  ::unlink(notify_path_.c_str());
  notify_fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, notify_path_.c_str(), sizeof addr.sun_path - 1);
  ::bind(notify_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::chmod(notify_path_.c_str(), 0666);

  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "NOTIFY_SOCKET=", 14) != 0 && std::strncmp(*e, "LISTEN_", 7) != 0) env.emplace_back(*e);
  }
  env.push_back("NOTIFY_SOCKET=" + notify_path_);
  if (launch.as_user) {
    env.push_back("HOME=" + launch.as_user->home);
    env.push_back("USER=" + launch.as_user->name);
  }
  env.insert(env.end(), launch.env.begin(), launch.env.end());
  if (launch.listen_fd >= 0) env.push_back("LISTEN_FDS=1");
  // LISTEN_PID is the child's own pid, known only after fork: reserve the slot, fill it there.
  std::string listen_pid(64, '\0');
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  if (launch.listen_fd >= 0) envp.push_back(listen_pid.data());
  envp.push_back(nullptr);

  std::string binary = TestDaemon::codexd_binary();
  std::vector<std::string> args = {binary, "--config", config_path_};
  args.insert(args.end(), launch.args.begin(), launch.args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t foreign_pid = ::getpid();  // certainly not the daemon's

  pid_ = ::fork();
  if (pid_ == 0) {
    int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ::dup2(log, 1);
    ::dup2(log, 2);
    int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::setpgid(0, 0);
    if (launch.listen_fd >= 0) {
      // Exactly what systemd does: the socket at SD_LISTEN_FDS_START (3), inheritable, and
      // LISTEN_PID naming the process that is meant to take it.
      if (launch.listen_fd == 3) {
        ::fcntl(3, F_SETFD, 0);
      } else if (::dup2(launch.listen_fd, 3) != 3) {
        _exit(125);
      }
      std::snprintf(listen_pid.data(), listen_pid.size(), "LISTEN_PID=%d",
                    static_cast<int>(launch.foreign_listen_pid ? foreign_pid : ::getpid()));
    }
    if (launch.as_user) {
      if (::initgroups(launch.as_user->name.c_str(), launch.as_user->gid) != 0 || ::setgid(launch.as_user->gid) != 0 ||
          ::setuid(launch.as_user->uid) != 0) {
        _exit(126);
      }
    }
    if (::chdir("/") != 0) _exit(126);
    ::execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
}

SystemDaemon::~SystemDaemon() {
  stop();
  if (notify_fd_ >= 0) ::close(notify_fd_);
  if (pidfd_ >= 0) ::close(pidfd_);
  ::unlink(notify_path_.c_str());
}

// Reads every datagram that arrives within `timeout_ms`; false when the daemon exited and
// nothing more is queued.
bool SystemDaemon::read_pending(int timeout_ms) {
  pollfd fds[2] = {{notify_fd_, POLLIN, 0}, {pidfd_, POLLIN, 0}};
  int n = ::poll(fds, pidfd_ >= 0 ? 2 : 1, timeout_ms);
  if (n <= 0) return true;
  if (fds[0].revents & POLLIN) {
    char buf[4096];
    ssize_t got;
    while ((got = ::recv(notify_fd_, buf, sizeof buf, MSG_DONTWAIT)) > 0) messages_.emplace_back(buf, static_cast<size_t>(got));
    return true;
  }
  return !(fds[1].revents & POLLIN);
}

std::optional<std::string> SystemDaemon::wait_notify(const std::string& needle, std::chrono::seconds guard) {
  const auto limit = std::chrono::steady_clock::now() + guard;
  for (;;) {
    for (; cursor_ < messages_.size(); ++cursor_) {
      if (messages_[cursor_].find(needle) != std::string::npos) return messages_[cursor_++];
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(limit - std::chrono::steady_clock::now()).count();
    if (left <= 0 || pid_ <= 0) return std::nullopt;
    if (!read_pending(static_cast<int>(left))) return std::nullopt;
  }
}

int SystemDaemon::stop() {
  if (pid_ <= 0) return -1;
  if (!reaped_) ::kill(pid_, SIGTERM);
  return wait_exit();
}

int SystemDaemon::wait_exit(std::chrono::seconds guard) {
  if (pid_ <= 0) return -1;
  if (reaped_) return exit_code_;
  if (pidfd_ >= 0) {
    pollfd p{pidfd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::chrono::milliseconds(guard).count())) == 0) ::kill(pid_, SIGKILL);
  }
  int status = 0;
  ::waitpid(pid_, &status, 0);
  reaped_ = true;
  // Collect what it said on the way out (STOPPING=1).
  char buf[4096];
  ssize_t got;
  while ((got = ::recv(notify_fd_, buf, sizeof buf, MSG_DONTWAIT)) > 0) messages_.emplace_back(buf, static_cast<size_t>(got));
  exit_code_ = exit_code_of(status);
  return exit_code_;
}

std::string SystemDaemon::log() const {
  std::ifstream in(log_path_);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string to_json(const google::protobuf::Message& message) {
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(message, &json);
  return json;
}

RpcOutcome parse_rpc_output(const ProcessResult& result) {
  RpcOutcome outcome;
  outcome.raw = "exit " + std::to_string(result.exit_code) + "\nstdout:\n" + result.out + "\nstderr:\n" + result.err;
  std::istringstream lines(result.out);
  std::string line;
  if (!std::getline(lines, line) || line.rfind("STATUS ", 0) != 0) return outcome;
  size_t space = line.find(' ', 7);
  outcome.code = std::stoi(line.substr(7, space - 7));
  outcome.message = space == std::string::npos ? "" : line.substr(space + 1);
  while (std::getline(lines, line)) {
    if (!line.empty()) outcome.json.push_back(line);
  }
  return outcome;
}

RpcOutcome call_as(const TestUser* user, const std::string& socket, const std::string& method,
                   const google::protobuf::Message& request) {
  std::vector<std::string> argv = {rpc_client_binary(), socket, method, to_json(request)};
  return parse_rpc_output(user ? run_as_user(*user, argv) : run_process(argv));
}

}  // namespace codexd::testing
