#include "platform/posix/death_watch.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "platform/posix/fd_util.h"

extern char** environ;

namespace codexd::posix {
namespace {

// $1 is the kill file. The outer shell exits at once, so the watcher (the background subshell)
// is orphaned; ignored signals stay ignored in it. `read` returns at end of file. The pipe is
// kept as descriptor 3: an asynchronous list's stdin is /dev/null (POSIX, without job control).
constexpr const char* kWatcher = "trap '' HUP INT QUIT TERM PIPE; exec 3<&0; (read line <&3; echo 1 > \"$1\") & exit 0";

}  // namespace

Result<UniqueFd> start_death_watch(const std::string& kill_file) {
  CODEXD_ASSIGN_OR_RETURN(PipePair pipe, make_pipe());
  UniqueFd read_end = std::move(pipe.read_end);
  UniqueFd write_end = std::move(pipe.write_end);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, read_end.get(), STDIN_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
#ifdef __GLIBC__
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);  // nothing of the daemon's but the pipe
#endif
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);

  const char* argv[] = {"/bin/sh", "-c", kWatcher, "codexd-death-watch", kill_file.c_str(), nullptr};
  pid_t shell = -1;
  const int rc = ::posix_spawn(&shell, "/bin/sh", &actions, &attributes, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) return ErrnoStatus("death watch: spawning /bin/sh", rc);
  // The outer shell has only to start the watcher; its own exit is collected here.
  int status = 0;
  while (::waitpid(shell, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return Internal("death watch: /bin/sh could not start the watcher");
  return write_end;
}

}  // namespace codexd::posix
