#include "platform/linux/writable_scope.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

namespace codexd::sandbox::linux_backend {
namespace {

// The kernel's name of an open descriptor's file: absolute and canonical (no symlink, no
// "..") while the file is reachable; anything else (a pipe, a deleted file) is "".
std::string kernel_path(int fd) {
  char buffer[PATH_MAX];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(link.c_str(), buffer, sizeof buffer);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof buffer || buffer[0] != '/') return {};
  std::string path(buffer, static_cast<size_t>(n));
  if (path.size() >= 10 && path.compare(path.size() - 10, 10, " (deleted)") == 0) return {};
  return path;
}

bool is_below(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

bool same_file(int fd, const struct stat& st) {
  struct stat other;
  return ::fstat(fd, &other) == 0 && other.st_dev == st.st_dev && other.st_ino == st.st_ino;
}

// Opens `relative` below `dir` without leaving it and without following any symlink: it
// names the same file as the kernel's canonical path only if that path is still true.
UniqueFd open_beneath(int dir, const std::string& relative) {
  open_how how{};
  how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return UniqueFd(static_cast<int>(::syscall(SYS_openat2, dir, relative.c_str(), &how, sizeof how)));
}

}  // namespace

WritableScope::WritableScope(const std::vector<std::string>& writable, const std::vector<std::string>& read_only) {
  for (const std::string& path : writable) {
    UniqueFd dir(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!dir) continue;
    std::string canonical = kernel_path(dir.get());
    if (!canonical.empty()) roots_.push_back({std::move(canonical), std::move(dir)});
  }
  for (const std::string& path : read_only) {
    // A read-only path that does not exist yet is kept as written (Landlock keeps it from
    // being created); one that exists is named the way the kernel names its files.
    UniqueFd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
    std::string canonical = fd ? kernel_path(fd.get()) : std::string();
    read_only_.push_back(canonical.empty() ? path : canonical);
  }
}

bool WritableScope::contains(int target) const {
  struct stat st;
  if (::fstat(target, &st) != 0) return false;
  const std::string path = kernel_path(target);
  if (path.empty()) return false;
  for (const std::string& denied : read_only_) {
    if (is_below(path, denied)) return false;
  }
  for (const Root& root : roots_) {
    if (!is_below(path, root.path)) continue;
    std::string relative = path == root.path ? "." : path.substr(root.path == "/" ? 1 : root.path.size() + 1);
    // The name was true when the kernel gave it; this proves it is still true and that no
    // symlink or mount trick put the file there: the same inode, reached from the root.
    UniqueFd again = open_beneath(root.dir.get(), relative);
    if (again && same_file(again.get(), st)) return true;
  }
  return false;
}

int WritableScope::change_mode(int target, mode_t mode) const {
  struct stat st;
  if (::fstat(target, &st) != 0) return errno;
  if (S_ISLNK(st.st_mode)) return EOPNOTSUPP;  // what Linux answers for a symlink's own mode
  // A setuid (or setgid) program left in the workspace would run with the owner's rights
  // for whoever starts it later, outside the sandbox: the owner may be root.
  if ((mode & S_ISUID) != 0 || ((mode & S_ISGID) != 0 && !S_ISDIR(st.st_mode))) return EPERM;
  if (!contains(target)) return EPERM;
  if (::syscall(SYS_fchmodat2, target, "", mode, AT_EMPTY_PATH) == 0) return 0;
  if (errno != ENOSYS) return errno;
  // Before Linux 6.6 there is no fchmodat2; the descriptor's /proc link names the same inode.
  const std::string link = "/proc/self/fd/" + std::to_string(target);
  return ::chmod(link.c_str(), mode) == 0 ? 0 : errno;
}

int WritableScope::change_owner(int target, uid_t owner, gid_t group) const {
  if (!contains(target)) return EPERM;
  return ::fchownat(target, "", owner, group, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
}

}  // namespace codexd::sandbox::linux_backend
