// spawn_process for Linux: clone(CLONE_VM|CLONE_VFORK) on a private stack, close_range,
// PR_SET_PDEATHSIG, pidfd_open. None of these exist on macOS or the BSDs, so this file is
// compiled on Linux only (platform/posix/CMakeLists.txt) and refuses to build elsewhere.
#if !defined(__linux__)
#error "spawn_linux.cc is Linux-only (clone(CLONE_VM|CLONE_VFORK), close_range, PR_SET_PDEATHSIG, pidfd_open); another OS needs its own spawn_<os>.cc"
#endif

#include "platform/posix/spawn.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "platform/posix/forwarded_signals.h"
#include "platform/posix/fd_passing.h"
#include "platform/posix/fd_util.h"
#include "platform/posix/pty.h"

namespace codexd::posix {
namespace {

// Steps of the child, reported back when one fails.
enum class ChildStep : int {
  kNone = 0,
  kSignals,
  kJoinGroup,
  kOomScore,
  kSetsid,
  kControllingTty,
  kStdio,
  kParentDeath,
  kRlimit,
  kSetgroups,
  kSetgid,
  kSetuid,
  kPrivilegeCheck,
  kChdir,
  kCloseFds,
  kExec,
};

const char* step_name(ChildStep step) {
  switch (step) {
    case ChildStep::kSignals: return "reset signals";
    case ChildStep::kJoinGroup: return "join cgroup";
    case ChildStep::kOomScore: return "set oom_score_adj";
    case ChildStep::kSetsid: return "setsid";
    case ChildStep::kControllingTty: return "set controlling tty";
    case ChildStep::kStdio: return "set up stdio";
    case ChildStep::kParentDeath: return "parent-death signal";
    case ChildStep::kRlimit: return "setrlimit";
    case ChildStep::kSetgroups: return "setgroups";
    case ChildStep::kSetgid: return "setgid";
    case ChildStep::kSetuid: return "setuid";
    case ChildStep::kPrivilegeCheck: return "privilege drop check";
    case ChildStep::kChdir: return "chdir";
    case ChildStep::kCloseFds: return "close inherited descriptors";
    case ChildStep::kExec: return "execve";
    case ChildStep::kNone: break;
  }
  return "spawn";
}

// Everything the child needs, prepared by the parent (the child must not allocate).
struct ChildPlan {
  const char* executable;
  char* const* argv;
  char* const* envp;
  const char* cwd;
  int stdin_fd, stdout_fd, stderr_fd;
  int controlling_tty_fd;  // -1 unless PTY
  int pass_fd;             // -1, or the descriptor that becomes kPassedFdNumber
  int console_fd;          // -1, or the descriptor that becomes kConsoleFdNumber
  int program_fd;          // -1, or the descriptor that becomes kSeccompFdNumber
  int parent_death_signal;
  bool ignore_forwarded_signals;
  pid_t parent_pid;
  bool switch_credentials;
  uid_t uid;
  gid_t gid;
  const gid_t* groups;
  size_t group_count;
  const int* join_fds;
  size_t join_count;
  const ResourceLimit* rlimits;
  size_t rlimit_count;
  bool set_oom_score;
  char oom_score[16];  // decimal text, prepared by the parent
  // Written by the child on failure; read by the parent after the vfork-style clone returns.
  volatile int failed_step;
  volatile int failed_errno;
};

[[noreturn]] void child_fail(ChildPlan* plan, ChildStep step) {
  plan->failed_errno = errno;
  plan->failed_step = static_cast<int>(step);
  _exit(127);
}

// Moves `fd` to `target` even if it already sits at another std slot we are about to reuse.
bool install_fd(int fd, int target) {
  if (fd == target) {
    int flags = fcntl(fd, F_GETFD);
    return flags >= 0 && fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC) == 0;
  }
  return dup2(fd, target) == target;  // dup2 clears FD_CLOEXEC on the new descriptor
}

// The child's own oom_score_adj (the parent's descriptor would name the parent).
__attribute__((no_sanitize("address", "undefined"))) bool write_oom_score(const char* text) {
  int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  size_t length = 0;
  while (text[length] != '\0') ++length;
  bool ok = write(fd, text, length) == static_cast<ssize_t>(length);
  close(fd);
  return ok;
}

// After 0/1/2 are in place (so nothing still needed lives at 3 to 6): the passed descriptor
// at kPassedFdNumber, the console at kConsoleFdNumber (its source sits above 4, spawn_process
// puts it there, so installing 3 cannot clobber it), the seccomp programs at kSeccompFdNumber
// (source above 6, installed last), and every other descriptor closed, whatever a library
// forgot to mark close-on-exec.
__attribute__((no_sanitize("address", "undefined"))) bool install_passed_descriptors(const ChildPlan* plan) {
  if (plan->pass_fd >= 0 && !install_fd(plan->pass_fd, kPassedFdNumber)) return false;
  if (plan->console_fd >= 0 && !install_fd(plan->console_fd, kConsoleFdNumber)) return false;
  if (plan->program_fd >= 0 && !install_fd(plan->program_fd, kSeccompFdNumber)) return false;
  // A stray descriptor must not stay below the last one installed.
  const int sources[] = {plan->pass_fd, plan->console_fd, plan->program_fd};
  const int targets[] = {kPassedFdNumber, kConsoleFdNumber, kSeccompFdNumber};
  unsigned first_closed = 3U;
  for (int i = 0; i < 3; ++i) {
    if (sources[i] >= 0) first_closed = static_cast<unsigned>(targets[i]) + 1;
  }
  for (int fd = 3; fd < static_cast<int>(first_closed); ++fd) {
    bool installed = false;
    for (int i = 0; i < 3; ++i) installed = installed || (sources[i] >= 0 && targets[i] == fd);
    if (!installed) close(fd);
  }
  if (syscall(SYS_close_range, first_closed, ~0U, 0U) != 0) {
    // close_range needs Linux 5.9; fall back to marking them close-on-exec one by one.
    for (int fd = static_cast<int>(first_closed); fd < 65536; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  return true;
}

// Runs in the child, on its own stack, sharing the parent's memory until execve.
// Only async-signal-safe calls; no sanitizer instrumentation on the foreign stack.
__attribute__((no_sanitize("address", "undefined"))) int child_main(void* arg) {
  auto* plan = static_cast<ChildPlan*>(arg);

  // Handlers belong to the daemon: reset every disposition and unblock everything.
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    sigaction(sig, &dfl, nullptr);  // fails harmlessly for the reserved RT signals
  }
  if (plan->ignore_forwarded_signals) {
    struct sigaction ign;
    std::memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    for (int sig : kForwardedSignals) sigaction(sig, &ign, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  if (sigprocmask(SIG_SETMASK, &none, nullptr) != 0) child_fail(plan, ChildStep::kSignals);

  // Into the resource groups before anything else: whatever the command starts is born there.
  for (size_t i = 0; i < plan->join_count; ++i) {
    if (write(plan->join_fds[i], "0", 1) != 1) child_fail(plan, ChildStep::kJoinGroup);
  }
  if (plan->set_oom_score && !write_oom_score(plan->oom_score)) child_fail(plan, ChildStep::kOomScore);

  // Own session and process group: the daemon signals the whole group.
  if (setsid() < 0 && setpgid(0, 0) != 0) child_fail(plan, ChildStep::kSetsid);
  if (plan->controlling_tty_fd >= 0 && ioctl(plan->controlling_tty_fd, TIOCSCTTY, 0) != 0) {
    child_fail(plan, ChildStep::kControllingTty);
  }

  // The three std descriptors may alias each other (PTY); dup into place in an order that
  // cannot clobber a source before it is used: sources are always >= 3 here.
  if (!install_fd(plan->stdin_fd, 0) || !install_fd(plan->stdout_fd, 1) || !install_fd(plan->stderr_fd, 2)) {
    child_fail(plan, ChildStep::kStdio);
  }

  if (plan->parent_death_signal != 0) {
    if (prctl(PR_SET_PDEATHSIG, plan->parent_death_signal) != 0) child_fail(plan, ChildStep::kParentDeath);
    // The parent may have died between clone and prctl; then nobody would signal us.
    if (getppid() != plan->parent_pid) raise(plan->parent_death_signal);
  }

  for (size_t i = 0; i < plan->rlimit_count; ++i) {
    struct rlimit limit = {plan->rlimits[i].soft, plan->rlimits[i].hard};
    if (setrlimit(plan->rlimits[i].resource, &limit) != 0) child_fail(plan, ChildStep::kRlimit);
  }

  if (plan->switch_credentials) {
    if (setgroups(plan->group_count, plan->groups) != 0) child_fail(plan, ChildStep::kSetgroups);
    if (setresgid(plan->gid, plan->gid, plan->gid) != 0) child_fail(plan, ChildStep::kSetgid);
    if (setresuid(plan->uid, plan->uid, plan->uid) != 0) child_fail(plan, ChildStep::kSetuid);
    // Never continue with a way back to the old identity.
    if (plan->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) {
      errno = EPERM;
      child_fail(plan, ChildStep::kPrivilegeCheck);
    }
  }

  if (chdir(plan->cwd) != 0) child_fail(plan, ChildStep::kChdir);

  if (!install_passed_descriptors(plan)) child_fail(plan, ChildStep::kStdio);
  execve(plan->executable, plan->argv, plan->envp);
  child_fail(plan, ChildStep::kExec);
}

// NULL-terminated char* array over strings that outlive it.
std::vector<char*> c_string_array(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

bool contains_nul(const std::string& s) { return s.find('\0') != std::string::npos; }

Status validate(const SpawnRequest& request) {
  if (request.argv.empty()) return InvalidArgument("argv is empty");
  if (request.executable.empty() || contains_nul(request.executable)) return InvalidArgument("bad executable path");
  if (request.cwd.empty() || request.cwd[0] != '/' || contains_nul(request.cwd)) {
    return InvalidArgument("working directory must be an absolute path");
  }
  for (const auto& a : request.argv) {
    if (contains_nul(a)) return InvalidArgument("argv contains a NUL byte");
  }
  for (const auto& e : request.env) {
    if (contains_nul(e) || e.find('=') == std::string::npos) return InvalidArgument("bad environment entry");
  }
  // 0/1/2 are replaced by the child's stdio before the passed descriptor is installed.
  if (request.pass_fd >= 0 && request.pass_fd < 3) return InvalidArgument("pass_fd must be 3 or above");
  if (request.console_socket && request.stdio != StdioMode::kPty) return InvalidArgument("console_socket needs a PTY");
  if (request.program_fd >= 0 && request.program_fd < 3) return InvalidArgument("program_fd must be 3 or above");
  return Status::Ok();
}

// The child's stack: mapped once per spawn, unmapped after the clone returns.
class ChildStack {
 public:
  static constexpr size_t kSize = 256 * 1024;
  ChildStack() {
    void* p = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  }
  ~ChildStack() {
    if (base_ != nullptr) munmap(base_, kSize);
  }
  ChildStack(const ChildStack&) = delete;
  ChildStack& operator=(const ChildStack&) = delete;
  bool ok() const { return base_ != nullptr; }
  void* top() const { return base_ + kSize; }  // stacks grow down on every arch we build for

 private:
  char* base_ = nullptr;
};

// The child's ends of its std descriptors (all at fd >= 3); the parent's ends go in `result`.
struct ChildStdio {
  UniqueFd stdin_fd, stdout_fd, stderr_fd, tty, console;
  UniqueFd program;  // a copy of request.program_fd above kSeccompFdNumber
};

// The console socket pair; the child's end above kConsoleFdNumber, so that installing 3 and 4
// in the child never overwrites it before it is copied.
Status open_console_socket(ChildStdio& child, SpawnedProcess& result) {
  CODEXD_ASSIGN_OR_RETURN(SocketPair pair, make_seqpacket_pair());
  result.console = std::move(pair.first);
  child.console.reset(::fcntl(pair.second.get(), F_DUPFD_CLOEXEC, kConsoleFdNumber + 1));
  if (!child.console) return ErrnoStatus("fcntl F_DUPFD_CLOEXEC (console)", errno);
  return Status::Ok();
}

Status open_pipes(const SpawnRequest& request, ChildStdio& child, SpawnedProcess& result) {
  if (request.stdin_pipe) {
    CODEXD_ASSIGN_OR_RETURN(PipePair in, make_pipe());
    child.stdin_fd = std::move(in.read_end);
    result.input = std::move(in.write_end);
  } else {
    child.stdin_fd.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!child.stdin_fd) return ErrnoStatus("open /dev/null", errno);
  }
  CODEXD_ASSIGN_OR_RETURN(PipePair out, make_pipe());
  child.stdout_fd = std::move(out.write_end);
  result.output = std::move(out.read_end);
  if (request.stdio == StdioMode::kPipesSeparate) {
    CODEXD_ASSIGN_OR_RETURN(PipePair err, make_pipe());
    child.stderr_fd = std::move(err.write_end);
    result.error = std::move(err.read_end);
  }
  return Status::Ok();
}

Status open_stdio(const SpawnRequest& request, ChildStdio& child, SpawnedProcess& result) {
  if (request.stdio == StdioMode::kPty) {
    CODEXD_ASSIGN_OR_RETURN(PtyPair pty, open_pty(request.rows, request.cols));
    CODEXD_ASSIGN_OR_RETURN(result.input, dup_cloexec(pty.master.get()));
    result.output = std::move(pty.master);
    child.tty = std::move(pty.slave);
    if (request.console_socket) CODEXD_RETURN_IF_ERROR(open_console_socket(child, result));
  } else {
    CODEXD_RETURN_IF_ERROR(open_pipes(request, child, result));
  }

  // Descriptors the child dups into 0/1/2 must not already be 0/1/2 (a daemon started with
  // closed std descriptors would get them); move them up.
  for (UniqueFd* fd : {&child.stdin_fd, &child.stdout_fd, &child.stderr_fd, &child.tty}) {
    if (fd->valid() && fd->get() < 3) {
      CODEXD_ASSIGN_OR_RETURN(UniqueFd moved, dup_cloexec(fd->get()));
      *fd = std::move(moved);
    }
  }

  for (UniqueFd* fd : {&result.output, &result.error, &result.input}) {
    if (fd->valid()) CODEXD_RETURN_IF_ERROR(set_nonblocking(fd->get()));
  }
  return Status::Ok();
}

// `argv` and `envp` are the c_string_array()s of the request; all must outlive the plan.
void fill_child_plan(const SpawnRequest& request, const ChildStdio& child, char* const* argv,
                     char* const* envp, ChildPlan& plan) {
  plan.executable = request.executable.c_str();
  plan.argv = argv;
  plan.envp = envp;
  plan.cwd = request.cwd.c_str();
  if (child.tty) {
    plan.stdin_fd = plan.stdout_fd = plan.stderr_fd = child.tty.get();
    plan.controlling_tty_fd = child.tty.get();
  } else {
    plan.stdin_fd = child.stdin_fd.get();
    plan.stdout_fd = child.stdout_fd.get();
    plan.stderr_fd = child.stderr_fd ? child.stderr_fd.get() : child.stdout_fd.get();
    plan.controlling_tty_fd = -1;
  }
  plan.pass_fd = request.pass_fd;
  plan.console_fd = child.console.get();
  plan.program_fd = child.program.get();
  plan.parent_death_signal = request.ignore_forwarded_signals ? SIGKILL : request.parent_death_signal;
  plan.ignore_forwarded_signals = request.ignore_forwarded_signals;
  plan.parent_pid = ::getpid();
  if (request.credentials) {
    plan.switch_credentials = true;
    plan.uid = request.credentials->uid;
    plan.gid = request.credentials->gid;
    plan.groups = request.credentials->groups.data();
    plan.group_count = request.credentials->groups.size();
  }
  plan.join_fds = request.join_fds.data();
  plan.join_count = request.join_fds.size();
  plan.rlimits = request.rlimits.data();
  plan.rlimit_count = request.rlimits.size();
  if (request.oom_score_adj) {
    plan.set_oom_score = true;
    std::snprintf(plan.oom_score, sizeof plan.oom_score, "%d", *request.oom_score_adj);
  }
}

// Clones the child and returns once it has exec'd (or failed a step, which is reported).
Result<pid_t> clone_child(const SpawnRequest& request, ChildPlan& plan) {
  ChildStack stack;
  if (!stack.ok()) return ErrnoStatus("mmap child stack", errno);

  // Block every signal so no daemon handler runs on the child's stack between clone and
  // the child's own reset.
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  pid_t pid = ::clone(child_main, stack.top(), CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
  int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (pid < 0) return ErrnoStatus("clone", clone_errno);

  if (plan.failed_step != 0) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::string what = step_name(static_cast<ChildStep>(plan.failed_step));
    if (static_cast<ChildStep>(plan.failed_step) == ChildStep::kExec) what += " " + request.executable;
    if (static_cast<ChildStep>(plan.failed_step) == ChildStep::kChdir) what += " " + request.cwd;
    return ErrnoStatus(what, plan.failed_errno);
  }
  return pid;
}

}  // namespace

Result<SpawnedProcess> spawn_process(const SpawnRequest& request) {
  CODEXD_RETURN_IF_ERROR(validate(request));

  SpawnedProcess result;
  ChildStdio child;
  CODEXD_RETURN_IF_ERROR(open_stdio(request, child, result));
  if (request.program_fd >= 0) {
    // Above every slot installed before it, so that installing 3 and 4 cannot overwrite it.
    child.program.reset(::fcntl(request.program_fd, F_DUPFD_CLOEXEC, kSeccompFdNumber + 1));
    if (!child.program) return ErrnoStatus("fcntl F_DUPFD_CLOEXEC (seccomp programs)", errno);
  }

  std::vector<char*> argv = c_string_array(request.argv);
  std::vector<char*> envp = c_string_array(request.env);
  ChildPlan plan{};
  fill_child_plan(request, child, argv.data(), envp.data(), plan);
  CODEXD_ASSIGN_OR_RETURN(pid_t pid, clone_child(request, plan));

  result.pid = pid;
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    int err = errno;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return ErrnoStatus("pidfd_open", err);
  }
  result.pidfd.reset(pidfd);
  CODEXD_RETURN_IF_ERROR(set_cloexec(pidfd));
  return result;
}

Status signal_process_group(pid_t pgid, int signal) {
  if (pgid <= 1) return InvalidArgument("refusing to signal process group " + std::to_string(pgid));
  if (::killpg(pgid, signal) != 0 && errno != ESRCH) return ErrnoStatus("killpg", errno);
  return Status::Ok();
}

}  // namespace codexd::posix
