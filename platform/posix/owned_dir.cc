#include "platform/posix/owned_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/fsuid.h>
#endif

#include <cerrno>
#include <cstdio>
#include <vector>

namespace codexd::posix {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::string octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

bool single_component(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

// The checks on an opened directory (st from fstat of the very descriptor that is returned).
Status check_owned(const struct stat& st, const DirOwner& owner, std::string_view what) {
  if (!S_ISDIR(st.st_mode)) return PermissionDenied(std::string(what) + " is not a directory");
  if (st.st_uid != owner.uid) {
    return PermissionDenied(std::string(what) + " belongs to uid " + std::to_string(st.st_uid) + ", not uid " +
                            std::to_string(owner.uid) + "; refusing to use it");
  }
  if ((st.st_mode & 077 & ~owner.mode) != 0) {
    return PermissionDenied(std::string(what) + " has mode " + octal(st.st_mode) + " (at most " + octal(owner.mode) +
                            " expected); refusing to use it");
  }
  return Status::Ok();
}

// Gives a directory just made its exact mode, then to its owner (fchown, root only). In that
// order: once another uid owns it, fchmod needs CAP_FOWNER, which codexd.service does not grant.
Status settle_new_dir(int fd, const DirOwner& owner, std::string_view what) {
  if (::fchmod(fd, owner.mode) != 0) return ErrnoStatus(std::string(what) + ": chmod", errno);
  if (::geteuid() == 0 && ::fchown(fd, owner.uid, owner.gid) != 0) return ErrnoStatus(std::string(what) + ": chown", errno);
  return Status::Ok();
}

// Switches this thread's filesystem identity for its lifetime (Linux: per thread).
class FsIdentity {
 public:
  explicit FsIdentity(const DirOwner& as) {
#ifdef __linux__
    old_gid_ = static_cast<gid_t>(::setfsgid(as.gid));
    old_uid_ = static_cast<uid_t>(::setfsuid(as.uid));
#else
    (void)as;
#endif
  }
  ~FsIdentity() {
#ifdef __linux__
    ::setfsuid(old_uid_);
    ::setfsgid(old_gid_);
#endif
  }
  FsIdentity(const FsIdentity&) = delete;
  FsIdentity& operator=(const FsIdentity&) = delete;

 private:
  uid_t old_uid_ = 0;
  gid_t old_gid_ = 0;
};

// Empties the directory open as `dir_fd`. Each entry is examined with AT_SYMLINK_NOFOLLOW and
// a subdirectory opened with O_NOFOLLOW relative to `dir_fd`: a link is unlinked, never entered.
Status empty_dir(int dir_fd, int depth_left) {
  if (depth_left <= 0) return ResourceExhausted("directory tree too deep to remove");
  int list_fd = ::dup(dir_fd);
  if (list_fd < 0) return ErrnoStatus("dup", errno);
  DIR* dir = ::fdopendir(list_fd);
  if (!dir) {
    int err = errno;
    ::close(list_fd);
    return ErrnoStatus("fdopendir", err);
  }
  std::vector<std::string> names;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(dir);
  Status first = Status::Ok();
  for (const std::string& name : names) {
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    if (S_ISDIR(st.st_mode)) {
      // Its owner may have left it unreadable; the owner may always give the rights back.
      if ((st.st_mode & 0700) != 0700 && ::fchmodat(dir_fd, name.c_str(), 0700, 0) != 0 && first.ok()) {
        first = ErrnoStatus("chmod " + name, errno);
      }
      UniqueFd sub(::openat(dir_fd, name.c_str(), kDirFlags));
      if (!sub) {
        if (first.ok()) first = ErrnoStatus("open " + name, errno);
        continue;
      }
      Status emptied = empty_dir(sub.get(), depth_left - 1);
      if (!emptied.ok() && first.ok()) first = emptied;
    }
    int flags = S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0;
    if (::unlinkat(dir_fd, name.c_str(), flags) != 0 && errno != ENOENT && first.ok()) {
      first = ErrnoStatus("remove " + name, errno);
    }
  }
  return first;
}

}  // namespace

Result<UniqueFd> open_owned_dir_at(int parent_fd, std::string_view name, const DirOwner& owner, std::string_view what) {
  if (!single_component(name)) return InvalidArgument(std::string(what) + ": bad directory name");
  const std::string n(name);
  bool created = ::mkdirat(parent_fd, n.c_str(), 0700) == 0;
  if (!created && errno != EEXIST) return ErrnoStatus(std::string(what) + ": mkdir", errno);
  UniqueFd fd(::openat(parent_fd, n.c_str(), kDirFlags));
  if (!fd) {
    if (errno == ELOOP || errno == ENOTDIR) {
      return PermissionDenied(std::string(what) + " is a symlink or not a directory; refusing to follow it");
    }
    return ErrnoStatus(std::string(what) + ": open", errno);
  }
  if (created) CODEXD_RETURN_IF_ERROR(settle_new_dir(fd.get(), owner, what));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(std::string(what) + ": stat", errno);
  CODEXD_RETURN_IF_ERROR(check_owned(st, owner, what));
  return fd;
}

Result<UniqueFd> open_dir_nofollow(const std::string& path) {
  if (path.empty() || path.front() != '/') return InvalidArgument("not an absolute path: " + path);
  UniqueFd fd(::open("/", kDirFlags));
  if (!fd) return ErrnoStatus("open /", errno);
  size_t at = 1;
  while (at < path.size()) {
    size_t end = path.find('/', at);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(at, end - at);
    at = end + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") return InvalidArgument("path has a .. component: " + path);
    UniqueFd next(::openat(fd.get(), part.c_str(), kDirFlags));
    if (!next) {
      if (errno == ELOOP || errno == ENOTDIR) return PermissionDenied(path + ": component " + part + " is a symlink or not a directory");
      return ErrnoStatus("open " + path, errno);
    }
    fd = std::move(next);
  }
  return fd;
}

Status remove_tree_at(int parent_fd, std::string_view name, const DirOwner& contents_as, int max_depth) {
  if (!single_component(name)) return InvalidArgument("bad directory name");
  const std::string n(name);
  {
    UniqueFd dir(::openat(parent_fd, n.c_str(), kDirFlags));
    if (!dir) {
      if (errno == ENOENT) return Status::Ok();
      if (errno != ELOOP && errno != ENOTDIR) return ErrnoStatus("open " + n, errno);
    } else {
      FsIdentity as(contents_as);
      CODEXD_RETURN_IF_ERROR(empty_dir(dir.get(), max_depth));
    }
  }
  // A symlink or file in its place is removed as a name, never followed.
  struct stat st {};
  if (::fstatat(parent_fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Status::Ok();
  if (::unlinkat(parent_fd, n.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0 && errno != ENOENT) {
    return ErrnoStatus("remove " + n, errno);
  }
  return Status::Ok();
}

}  // namespace codexd::posix
