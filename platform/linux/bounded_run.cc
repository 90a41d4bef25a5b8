#include "platform/linux/bounded_run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "base/unique_fd.h"

namespace codexd::sandbox::linux_backend {
namespace {

int remaining_ms(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                     std::chrono::steady_clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(left.count());
}

struct SpawnAttrs {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  SpawnAttrs() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnAttrs() {
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
  }
};

void reap(pid_t pid, BoundedRunResult* result) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result->exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result->term_signal = WTERMSIG(status);
}

}  // namespace

Result<BoundedRunResult> run_bounded(const std::vector<std::string>& argv,
                                     std::chrono::steady_clock::time_point deadline,
                                     size_t max_output) {
  if (argv.empty()) return InvalidArgument("empty argv");
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return ErrnoStatus("pipe2", errno);
  UniqueFd read_end(pipe_fds[0]);
  UniqueFd write_end(pipe_fds[1]);

  SpawnAttrs spawn;
  posix_spawn_file_actions_addopen(&spawn.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&spawn.actions, write_end.get(), 1);
  posix_spawn_file_actions_adddup2(&spawn.actions, write_end.get(), 2);
  posix_spawn_file_actions_addclosefrom_np(&spawn.actions, 3);
  sigset_t all;
  sigset_t none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&spawn.attr, &all);
  posix_spawnattr_setsigmask(&spawn.attr, &none);
  posix_spawnattr_setpgroup(&spawn.attr, 0);
  posix_spawnattr_setflags(&spawn.attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK |
                                            POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_USEVFORK);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // A fixed, minimal environment: C locale so failure texts can be classified.
  char path_env[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
  char lang_env[] = "LC_ALL=C";
  char* env[] = {path_env, lang_env, nullptr};

  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &spawn.actions, &spawn.attr, args.data(), env);
  if (rc != 0) return ErrnoStatus("posix_spawn " + argv[0], rc);
  write_end.reset();

  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  BoundedRunResult result;
  bool exited = false;
  bool eof = false;
  char buf[4096];
  while (!(exited && eof)) {
    int wait_ms = remaining_ms(deadline);
    if (wait_ms == 0) {
      result.timed_out = !exited;  // exited but a straggler holds the pipe: not a timeout
      break;
    }
    pollfd fds[2] = {{read_end.get(), POLLIN, 0}, {pidfd.get(), POLLIN, 0}};
    nfds_t count = pidfd.valid() && !exited ? 2 : 1;
    if (eof) fds[0].fd = -1;
    int ready = ::poll(fds, count, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    if (!eof && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      ssize_t n = ::read(read_end.get(), buf, sizeof buf);
      if (n > 0) {
        size_t room = max_output - std::min(max_output, result.output.size());
        result.output.append(buf, std::min(room, static_cast<size_t>(n)));
      } else if (n == 0 || errno != EINTR) {
        eof = true;
      }
    }
    if (count == 2 && (fds[1].revents & POLLIN) != 0) exited = true;
    if (!pidfd.valid() && eof) exited = true;  // no pidfd: EOF is the best exit signal
  }
  if (!exited || !eof) {
    ::kill(-pid, SIGKILL);  // the probe and anything it left behind in its group
    ::kill(pid, SIGKILL);
  }
  reap(pid, &result);
  if (result.timed_out) result.exit_code = -1;
  return result;
}

}  // namespace codexd::sandbox::linux_backend
