#include "tests/sandbox/sandbox_test_support.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "platform/posix/fd_passing.h"
#include "platform/posix/spawn.h"
#include "tests/support/test_stage.h"

namespace codexd::sandbox::testing {
namespace {

std::vector<char*> c_strings(const std::vector<std::string>& words) {
  std::vector<char*> out;
  for (const std::string& w : words) out.push_back(const_cast<char*>(w.c_str()));
  out.push_back(nullptr);
  return out;
}

// fork + exec; between them only async-signal-safe calls (the test may run listener threads).
// `pass_fd` >= 0 becomes descriptor 3 (the proxy channel) and `program_fd` >= 0 descriptor 6
// (the compiled seccomp programs), as the daemon's spawn does it.
pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
            const std::string& cwd, const RunOptions& options, int stdin_fd, int out_fd, int pass_fd = -1,
            int program_fd = -1) {
  std::vector<char*> c_argv = c_strings(argv);
  std::vector<char*> c_env = c_strings(env);
  bool switch_uid = options.uid.has_value();
  int leak = options.leak_fd_path.empty() ? -1 : ::open(options.leak_fd_path.c_str(), O_RDWR | O_CLOEXEC);
  uid_t uid = options.uid.value_or(0);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid != 0) {
    if (leak >= 0) ::close(leak);
    return pid;
  }
  ::setsid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(125);
  // Out of the way of the slots installed below.
  const int program = program_fd >= 0 ? ::fcntl(program_fd, F_DUPFD_CLOEXEC, 16) : -1;
  ::dup2(stdin_fd, 0);
  ::dup2(out_fd, 1);
  ::dup2(out_fd, 2);
  if (pass_fd == 3) ::fcntl(3, F_SETFD, 0);
  else if (pass_fd >= 0) ::dup2(pass_fd, 3);  // dup2 clears FD_CLOEXEC on the copy
  if (leak >= 0) ::dup2(leak, 5);             // dup2 clears FD_CLOEXEC on the copy
  if (program >= 0) ::dup2(program, posix::kSeccompFdNumber);
  for (int fd = 3; fd <= posix::kSeccompFdNumber; ++fd) {
    const bool kept = (fd == 3 && pass_fd >= 0) || (fd == 5 && leak >= 0) || (fd == posix::kSeccompFdNumber && program >= 0);
    if (!kept) ::close(fd);
  }
  ::syscall(SYS_close_range, static_cast<unsigned>(posix::kSeccompFdNumber) + 1, ~0U, 0U);
  if (switch_uid && (::setgroups(0, nullptr) != 0 || ::setresgid(uid, uid, uid) != 0 ||
                     ::setresuid(uid, uid, uid) != 0)) {
    ::_exit(124);
  }
  if (::chdir(cwd.c_str()) != 0) ::_exit(123);
  ::execve(c_argv[0], c_argv.data(), c_env.data());
  ::_exit(127);
}


// Stands in for the daemon's proxy: takes the listening sockets from the channel, answers
// "pong" on each connection until stopped.
class StandInProxy {
 public:
  explicit StandInProxy(UniqueFd channel) : channel_(std::move(channel)) {
    if (::pipe2(stop_, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
    thread_ = std::thread([this] { serve(); });
  }
  ~StandInProxy() { stop(); }
  void stop() {
    if (!thread_.joinable()) return;
    ::close(stop_[1]);
    thread_.join();
    ::close(stop_[0]);
  }
  std::string message() const { return message_; }
  int connections() const { return connections_; }

 private:
  void serve() {
    pollfd wait_channel[2] = {{channel_.get(), POLLIN, 0}, {stop_[0], POLLIN, 0}};
    if (::poll(wait_channel, 2, -1) <= 0 || wait_channel[1].revents != 0) return;
    Result<posix::ReceivedFds> received = posix::receive_fds(channel_.get());
    if (!received.ok()) return;
    message_ = received->payload;
    std::vector<pollfd> fds;
    for (const UniqueFd& fd : received->fds) fds.push_back({fd.get(), POLLIN, 0});
    fds.push_back({stop_[0], POLLIN, 0});
    while (::poll(fds.data(), fds.size(), -1) > 0 && fds.back().revents == 0) {
      for (size_t i = 0; i + 1 < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        int conn = ::accept4(fds[i].fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (conn < 0) continue;
        ++connections_;
        char buf[16];
        pollfd p{conn, POLLIN, 0};
        if (::poll(&p, 1, 10000) > 0 && ::recv(conn, buf, sizeof buf, 0) > 0) ::send(conn, "pong", 4, MSG_NOSIGNAL);
        ::close(conn);
      }
    }
  }

  UniqueFd channel_;
  int stop_[2] = {-1, -1};
  std::string message_;
  std::atomic<int> connections_{0};
  std::thread thread_;
};

RunResult run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
              const std::string& cwd, const RunOptions& options, bool proxy_channel = false, int program_fd = -1) {
  int out[2];
  int in[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
  std::unique_ptr<StandInProxy> proxy;
  posix::SocketPair channel;
  if (proxy_channel) {
    Result<posix::SocketPair> pair = posix::make_seqpacket_pair();
    if (!pair.ok()) throw std::runtime_error(pair.status().to_string());
    channel = std::move(*pair);
  }
  pid_t pid = spawn(argv, env, cwd, options, in[0], out[1], proxy_channel ? channel.second.get() : -1, program_fd);
  channel.second.reset();
  if (proxy_channel) proxy = std::make_unique<StandInProxy>(std::move(channel.first));
  ::close(out[1]);
  ::close(in[0]);
  if (!options.stdin_data.empty()) {
    ssize_t ignored = ::write(in[1], options.stdin_data.data(), options.stdin_data.size());
    (void)ignored;
  }
  ::close(in[1]);
  RunResult result;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) result.output.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
  if (proxy) {
    proxy->stop();
    result.proxy_message = proxy->message();
    result.proxy_connections = proxy->connections();
  }
  return result;
}

}  // namespace

std::string backend_name(TestBackend backend) {
  return backend == TestBackend::kBwrap ? "bwrap" : "landlock";
}

const std::string& helper_path() {
  static const std::string path = ::codexd::testing::staged_program("codexd-sandbox-helper");
  return path;
}

const std::string& probe_path() {
  static const std::string path = ::codexd::testing::staged_program("sandbox_probe");
  return path;
}

std::string RunResult::describe() const {
  std::ostringstream out;
  out << "exit=" << exit_code << " signal=" << term_signal << " output=[" << output << "]";
  return out.str();
}

RunResult run_plan(const LaunchPlan& plan, const RunOptions& options) {
  return run(plan.argv, plan.env, plan.cwd, options, plan.channel_fd >= 0,
             plan.seccomp_program ? plan.seccomp_program->get() : -1);
}

RunResult run_unsandboxed(const std::vector<std::string>& argv, const std::string& cwd,
                          const RunOptions& options) {
  return run(argv, {"PATH=/usr/bin:/bin", "LC_ALL=C"}, cwd, options);
}

Victim::Victim(const std::string& cwd) {
  int in[2];
  int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (::pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
  pid_ = spawn({probe_path(), "block"}, {"PATH=/usr/bin:/bin"}, cwd, {}, in[0], devnull);
  ::close(in[0]);
  ::close(devnull);
  stdin_fd_ = in[1];
}

Victim::~Victim() {
  ::close(stdin_fd_);
  int status = 0;
  ::waitpid(pid_, &status, 0);
}

std::string read_file_or(const std::string& path, const std::string& fallback) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fallback;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

bool path_exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

const SandboxManager* manager_for(TestBackend backend, std::string* why) {
  static std::mutex mu;
  static std::map<TestBackend, std::unique_ptr<SandboxManager>> managers;
  std::lock_guard<std::mutex> lock(mu);
  auto it = managers.find(backend);
  if (it == managers.end()) {
    SandboxManagerOptions options;
    options.helper_path = helper_path();
    options.preference = backend == TestBackend::kBwrap ? BackendPreference::kBwrap
                                                        : BackendPreference::kLandlock;
    it = managers.emplace(backend, create_sandbox_manager(options)).first;
  }
  const CapabilityReport& report = it->second->capabilities();
  Backend wanted = backend == TestBackend::kBwrap ? Backend::kLinuxBwrap : Backend::kLinuxLandlock;
  if (report.chosen != wanted) {
    *why = backend_name(backend) + " backend unusable here:";
    for (const std::string& w : report.warnings) *why += " " + w + ";";
    return nullptr;
  }
  return it->second.get();
}

SandboxSpec make_spec(const std::string& cwd, const SpecOptions& options) {
  SandboxPolicy policy;
  policy.mode = options.mode;
  policy.writable_roots = options.extra_writable;
  policy.network = options.network;
  policy.exclude_slash_tmp = !options.include_slash_tmp;
  policy.exclude_tmpdir_env_var = true;
  policy.denied_read = options.denied_read;
  ResolveContext context;
  context.cwd = cwd;
  context.masked_paths = options.masked;
  Result<SandboxSpec> spec = resolve_sandbox_spec(policy, context);
  if (!spec.ok()) throw std::runtime_error("resolve_sandbox_spec: " + spec.status().to_string());
  return *spec;
}

LaunchPlan make_plan(const SandboxManager& manager, const SandboxSpec& spec,
                     const std::vector<std::string>& argv, const std::string& cwd,
                     std::vector<std::string> env) {
  if (env.empty()) env = {"PATH=/usr/bin:/bin", "LC_ALL=C"};
  Result<LaunchPlan> plan = manager.plan(spec, {argv, cwd, env});
  if (!plan.ok()) throw std::runtime_error("plan: " + plan.status().to_string());
  return *plan;
}

RunResult run_probe_sandboxed(const SandboxManager& manager, const SandboxSpec& spec,
                              const std::string& cwd, const std::vector<std::string>& args,
                              const RunOptions& options) {
  std::vector<std::string> argv = {probe_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_plan(make_plan(manager, spec, argv, cwd), options);
}

RunResult run_probe_unsandboxed(const std::string& cwd, const std::vector<std::string>& args,
                                const RunOptions& options) {
  std::vector<std::string> argv = {probe_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_unsandboxed(argv, cwd, options);
}

}  // namespace codexd::sandbox::testing
