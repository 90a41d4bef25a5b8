#include "tests/support/test_users.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "tests/support/wait_exit.h"

extern char** environ;

namespace codexd::testing {
namespace {

std::vector<gid_t> group_list(const std::string& name, gid_t primary) {
  int n = 64;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  while (::getgrouplist(name.c_str(), primary, groups.data(), &n) < 0) groups.resize(static_cast<size_t>(n));
  groups.resize(static_cast<size_t>(n));
  return groups;
}

// Names in the first column of /etc/passwd or /etc/group.
std::vector<std::string> names_in(const std::string& file) {
  std::vector<std::string> names;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) names.push_back(line.substr(0, line.find(':')));
  return names;
}

// prefix<digits><letters>: the digits are the pid of the run that created it.
std::optional<pid_t> creator_pid(const std::string& name, const std::string& prefix) {
  if (name.rfind(prefix, 0) != 0) return std::nullopt;
  size_t i = prefix.size(), start = i;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
  if (i == start || i == name.size()) return std::nullopt;
  for (size_t j = i; j < name.size(); ++j) {
    if (!std::islower(static_cast<unsigned char>(name[j]))) return std::nullopt;
  }
  return static_cast<pid_t>(std::stol(name.substr(start, i - start)));
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In a forked child: become `user` (initgroups + setgid + setuid), or stay root.
void become(const TestUser* user) {
  if (!user) return;
  if (::initgroups(user->name.c_str(), user->gid) != 0 || ::setgid(user->gid) != 0 || ::setuid(user->uid) != 0) _exit(126);
  if (::chdir("/") != 0) _exit(126);
}

void drain(int fd, std::string& sink) {
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) sink.append(buf, static_cast<size_t>(n));
  ::close(fd);
}

}  // namespace

TestUsers::TestUsers(std::string prefix) : prefix_(std::move(prefix)) { sweep_stale(prefix_); }

TestUsers::~TestUsers() {
  for (auto it = users_.rbegin(); it != users_.rend(); ++it) run_process({"/usr/sbin/userdel", "-r", "-f", *it});
  for (auto it = groups_.rbegin(); it != groups_.rend(); ++it) run_process({"/usr/sbin/groupdel", *it});
}

void TestUsers::sweep_stale(const std::string& prefix) {
  for (const auto& name : names_in("/etc/passwd")) {
    auto pid = creator_pid(name, prefix);
    if (pid && ::kill(*pid, 0) != 0 && errno == ESRCH) run_process({"/usr/sbin/userdel", "-r", "-f", name});
  }
  for (const auto& name : names_in("/etc/group")) {
    auto pid = creator_pid(name, prefix);
    if (pid && ::kill(*pid, 0) != 0 && errno == ESRCH) run_process({"/usr/sbin/groupdel", name});
  }
}

std::string TestUsers::unique_name(const std::string& suffix) const {
  return prefix_ + std::to_string(::getpid()) + suffix;
}

std::optional<gid_t> TestUsers::add_group(const std::string& suffix) {
  std::string name = unique_name(suffix);
  auto r = run_process({"/usr/sbin/groupadd", "--system", name});
  if (r.exit_code != 0) {
    error_ = "groupadd " + name + ": " + r.err;
    return std::nullopt;
  }
  groups_.push_back(name);
  group* gr = ::getgrnam(name.c_str());
  if (!gr) {
    error_ = "group " + name + " not found after groupadd";
    return std::nullopt;
  }
  return gr->gr_gid;
}

std::optional<TestUser> TestUsers::add_user(const std::string& suffix, const std::string& home,
                                            const std::vector<std::string>& groups, mode_t home_mode) {
  std::string name = unique_name(suffix);
  std::vector<std::string> argv = {"/usr/sbin/useradd", "--system", "--user-group", "--create-home",
                                   "--home-dir", home, "--shell", "/bin/sh"};
  if (!groups.empty()) {
    std::string list;
    for (const auto& g : groups) list += (list.empty() ? "" : ",") + g;
    argv.insert(argv.end(), {"--groups", list});
  }
  argv.push_back(name);
  auto r = run_process(argv);
  if (r.exit_code != 0) {
    error_ = "useradd " + name + ": " + r.err;
    return std::nullopt;
  }
  users_.push_back(name);
  passwd* pw = ::getpwnam(name.c_str());
  if (!pw) {
    error_ = "user " + name + " not found after useradd";
    return std::nullopt;
  }
  TestUser user{name, pw->pw_uid, pw->pw_gid, pw->pw_dir, {}};
  user.groups = group_list(name, user.gid);
  ::chmod(home.c_str(), home_mode);
  return user;
}

ProcessResult run_as_user(const TestUser& user, const std::vector<std::string>& argv, const std::string& stdin_data,
                          const std::vector<std::string>& extra_env) {
  BackgroundProcess process(&user, argv, extra_env);
  (void)stdin_data;  // stdin is /dev/null; no caller needs more yet
  return process.wait();
}

BackgroundProcess::BackgroundProcess(const TestUser* user, const std::vector<std::string>& argv,
                                     const std::vector<std::string>& extra_env) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return;
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    return;
  }
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  std::vector<std::string> args = argv;
  auto envp = c_strings(env);
  auto argp = c_strings(args);
  // Closed by the execve (O_CLOEXEC): the constructor returns once the program runs. Until
  // then the child is still between setuid and exec, not dumpable, its /proc files root's.
  int exec_sync[2];
  if (::pipe2(exec_sync, O_CLOEXEC) != 0) exec_sync[0] = exec_sync[1] = -1;
  pid_ = ::fork();
  if (pid_ == 0) {
    int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    become(user);
    ::execve(argp[0], argp.data(), envp.data());
    if (exec_sync[1] >= 0) (void)!::write(exec_sync[1], "x", 1);
    _exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  out_ = out[0];
  err_ = err[0];
  if (exec_sync[1] >= 0) {
    ::close(exec_sync[1]);
    char failed;
    while (::read(exec_sync[0], &failed, 1) < 0 && errno == EINTR) {
    }
    ::close(exec_sync[0]);
  }
}

BackgroundProcess::~BackgroundProcess() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    wait(std::chrono::seconds(5));
  }
}

ProcessResult BackgroundProcess::wait(std::chrono::seconds guard) {
  ProcessResult result;
  if (pid_ <= 0 || reaped_) return result;
  std::thread err_reader([&] { drain(err_, result.err); });
  std::thread out_reader([&] { drain(out_, result.out); });
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::chrono::milliseconds(guard).count())) == 0) ::kill(pid_, SIGKILL);
    ::close(pidfd);
  }
  int status = 0;
  ::waitpid(pid_, &status, 0);
  reaped_ = true;
  out_reader.join();
  err_reader.join();
  result.exit_code = exit_code_of(status);
  return result;
}

}  // namespace codexd::testing
