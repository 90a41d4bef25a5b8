// Waiting for a directory entry to go away, or for a file to be written, woken by inotify on
// its parent (never a fixed sleep); `guard` only bounds a hang.
#pragma once

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

namespace codexd::testing {

// Waits until `done()` holds, re-checking whenever an entry of `dir` is created, written,
// removed or renamed away.
inline bool wait_for_dir_change(const std::string& dir, const std::function<bool()>& done,
                                std::chrono::seconds guard = std::chrono::seconds(60)) {
  int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd >= 0) ::inotify_add_watch(fd, dir.c_str(), IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_CREATE | IN_MODIFY);
  const auto limit = std::chrono::steady_clock::now() + guard;
  bool ok = done();
  while (!ok && std::chrono::steady_clock::now() < limit) {
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, fd >= 0 ? 1000 : 50);  // the timeout only re-checks a missed event
    char buf[4096];
    while (fd >= 0 && ::read(fd, buf, sizeof buf) > 0) {
    }
    ok = done();
  }
  if (fd >= 0) ::close(fd);
  return ok;
}

// Until `path` no longer exists (not even as a dangling symlink).
inline bool wait_until_gone(const std::string& path, std::chrono::seconds guard = std::chrono::seconds(60)) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return wait_for_dir_change(dir, [&] { return !std::filesystem::exists(std::filesystem::symlink_status(path)); }, guard);
}

// Until `dir` has no entries.
inline bool wait_until_empty(const std::string& dir, std::chrono::seconds guard = std::chrono::seconds(60)) {
  return wait_for_dir_change(dir, [&] { return std::filesystem::is_empty(dir); }, guard);
}

}  // namespace codexd::testing
