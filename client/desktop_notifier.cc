#include "client/desktop_notifier.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

extern char** environ;

namespace codexd::client {
namespace {

bool set_in_environment(const char* name) {
  const char* value = std::getenv(name);
  return value && *value;
}

// The first executable `name` in $PATH, or "".
std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "";
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    if (dir.empty()) continue;  // the current directory is never searched for it
    const std::string candidate = std::string(dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace

DesktopNotifier::DesktopNotifier(bool wanted) {
  if (!wanted) return;
  if (!set_in_environment("DISPLAY") && !set_in_environment("WAYLAND_DISPLAY")) {
    why_inactive_ = "no desktop notifications: neither DISPLAY nor WAYLAND_DISPLAY is set";
    return;
  }
  program_ = find_on_path("notify-send");
  if (program_.empty()) why_inactive_ = "no desktop notifications: notify-send is not on PATH (package libnotify-bin)";
}

bool DesktopNotifier::notify(const std::string& summary, const std::string& body) {
  if (!active()) return false;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attributes);
  for (int fd = 0; fd <= 2; ++fd) posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);  // the terminal's Ctrl-C is not its business
  posix_spawnattr_setpgroup(&attributes, 0);
  // "--" ends the options: a body that starts with "-" stays the body.
  std::vector<std::string> words = {program_, "--", summary, body};
  std::vector<char*> argv;
  for (auto& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, program_.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return false;
  running_.push_back(pid);
  return true;
}

void DesktopNotifier::reap() {
  std::erase_if(running_, [](pid_t pid) {
    int status = 0;
    return ::waitpid(pid, &status, WNOHANG) != 0;  // ended (reaped) or no longer ours
  });
}

}  // namespace codexd::client
