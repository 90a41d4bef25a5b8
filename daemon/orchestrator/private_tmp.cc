#include "daemon/orchestrator/private_tmp.h"

#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <functional>

#include "base/lexical_path.h"
#include "daemon/orchestrator/identity.h"
#include "platform/posix/owned_dir.h"
#include "platform/posix/root_owned.h"

namespace codexd::orchestrator {
namespace {

constexpr std::string_view kTrashPrefix = ".trash-";

// 16 hex digits of SHA-256 of the agent id: a fixed-length name whatever the label holds.
std::string agent_hash(const std::string& agent_id) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(agent_id.data(), agent_id.size(), digest, &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < 8 && i < len; ++i) out += {kHex[digest[i] >> 4], kHex[digest[i] & 0xF]};
  return out;
}

// mkdir -p of `base` (missing components only, mode 0755 / 0700), then its canonical path once
// it is trusted: system mode posix::check_root_owned; user mode owned by the daemon's uid and
// writable by nobody else, with no symlink on the way.
Result<std::string> trusted_base(const std::string& base, bool system_mode) {
  CODEXD_RETURN_IF_ERROR(validate_absolute_path(base, "sandbox.private_tmp_dir"));
  const std::string normal = normalize_lexically(base);
  // Made here: exactly 0755 (users must reach their directories below), whatever the umask.
  const mode_t mode = system_mode ? 0755 : 0700;
  size_t at = 0;
  do {
    at = normal.find('/', at + 1);
    const std::string dir = normal.substr(0, at);  // the whole path last
    if (::mkdir(dir.c_str(), mode) == 0) {
      if (::chmod(dir.c_str(), mode) != 0) return ErrnoStatus("private /tmp base " + dir, errno);
    } else if (errno != EEXIST) {
      return ErrnoStatus("private /tmp base " + dir, errno);
    }
  } while (at != std::string::npos);
  if (system_mode) return posix::check_root_owned(normal, "private /tmp base");
  char real[PATH_MAX];
  if (!::realpath(normal.c_str(), real)) return ErrnoStatus("private /tmp base " + normal, errno);
  CODEXD_ASSIGN_OR_RETURN(UniqueFd fd, posix::open_dir_nofollow(real));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus("private /tmp base " + normal, errno);
  if (st.st_uid != ::geteuid() || (st.st_mode & 022) != 0) {
    return PermissionDenied(std::string("private /tmp base ") + real + " must belong to uid " +
                            std::to_string(::geteuid()) + " and be writable by it alone");
  }
  return std::string(real);
}

// The <base>/<uid> level: the daemon's (root in system mode), 0711, so users reach their own
// directories but cannot list or plant names next to them.
posix::DirOwner uid_level_owner(bool system_mode) { return {system_mode ? 0 : ::geteuid(), 0, 0711}; }

}  // namespace

std::string default_private_tmp_base(bool system_mode) {
  if (system_mode) return "/var/lib/codexd/tmp";
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state && state[0] == '/') return join_path(state, "codexd/tmp");
  // The daemon user's own home (passwd), not $HOME: a daemon started with another user's HOME
  // must not try to keep its directories there.
  Result<std::string> home = passwd_home(::geteuid());
  return join_path(home.ok() && !home->empty() && (*home)[0] == '/' ? *home : "/", ".local/state/codexd/tmp");
}

PrivateTmpStore::PrivateTmpStore(boost::asio::io_context& io, boost::asio::thread_pool& blocking,
                                 PrivateTmpOptions options)
    : io_(io), blocking_(blocking), options_(std::move(options)) {}

std::string PrivateTmpStore::path_in(const std::string& base, uid_t uid, const std::string& agent_id) {
  return join_path(join_path(normalize_lexically(base), std::to_string(uid)), agent_hash(agent_id));
}

Result<std::string> PrivateTmpStore::prepare(uid_t uid, gid_t gid, const std::string& agent_id) {
  std::lock_guard lock(mu_);
  CODEXD_ASSIGN_OR_RETURN(std::string base, trusted_base(options_.base, options_.system_mode));
  CODEXD_ASSIGN_OR_RETURN(UniqueFd base_fd, posix::open_dir_nofollow(base));
  const std::string uid_name = std::to_string(uid);
  const std::string uid_dir = join_path(base, uid_name);
  CODEXD_ASSIGN_OR_RETURN(UniqueFd uid_fd, posix::open_owned_dir_at(base_fd.get(), uid_name,
                                                                    uid_level_owner(options_.system_mode), uid_dir));
  const std::string hash = agent_hash(agent_id);
  const std::string path = join_path(uid_dir, hash);
  CODEXD_ASSIGN_OR_RETURN(UniqueFd dir_fd, posix::open_owned_dir_at(uid_fd.get(), hash, {uid, gid, 0700},
                                                                    "private /tmp " + path));
  Entry& entry = entries_[path];
  entry.uid = uid;
  entry.gid = gid;
  entry.agent_id = agent_id;
  if (entry.leases == 0) {  // a dry run, or a launch that never starts: idle from now
    entry.idle_since = std::chrono::steady_clock::now();
    schedule(path, entry);
  }
  return path;
}

std::shared_ptr<const void> PrivateTmpStore::lease(const std::string& path) {
  {
    std::lock_guard lock(mu_);
    ++entries_[path].leases;
  }
  std::weak_ptr<PrivateTmpStore> weak = weak_from_this();
  return std::shared_ptr<const void>(new int(0), [weak, path](const void* p) {
    delete static_cast<const int*>(p);
    if (auto self = weak.lock()) self->release(path);
  });
}

void PrivateTmpStore::release(const std::string& path) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(path);
  if (it == entries_.end() || it->second.leases == 0) return;
  if (--it->second.leases == 0) {
    it->second.idle_since = std::chrono::steady_clock::now();
    schedule(path, it->second);
  }
}

// A timer per idle period; a stale one finds the entry busy again (or idle for less than the
// grace) and does nothing, so no timer is ever cancelled from another thread.
void PrivateTmpStore::schedule(const std::string& path, Entry& entry) {
  auto timer = std::make_shared<boost::asio::steady_timer>(io_, std::chrono::milliseconds(options_.grace_ms));
  entry.timer = timer;
  std::weak_ptr<PrivateTmpStore> weak = weak_from_this();
  timer->async_wait([weak, path, timer](const boost::system::error_code& ec) {
    if (auto self = weak.lock(); self && !ec) self->expire(path);
  });
}

void PrivateTmpStore::expire(const std::string& path) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(path);
  if (it == entries_.end() || it->second.leases > 0) return;
  if (std::chrono::steady_clock::now() - it->second.idle_since < std::chrono::milliseconds(options_.grace_ms)) return;
  remove_now(path, it->second);
  entries_.erase(it);
}

// Renames the directory out of the way at once (a new command of the agent gets a fresh one),
// then removes the renamed tree on the blocking pool with the owner's filesystem identity.
void PrivateTmpStore::remove_now(const std::string& path, const Entry& entry) {
  const std::string uid_dir = parent_path(path);
  auto uid_fd = posix::open_dir_nofollow(uid_dir);
  if (!uid_fd.ok()) return;
  const std::string name = *path_basename(path);
  std::string trash = name;
  if (name.rfind(kTrashPrefix, 0) != 0) {
    trash = std::string(kTrashPrefix) + name + "-" + std::to_string(::getpid()) + "-" + std::to_string(++trash_counter_);
    if (::renameat(uid_fd->get(), name.c_str(), uid_fd->get(), trash.c_str()) != 0) return;
  }
  auto fd = std::make_shared<UniqueFd>(std::move(uid_fd).value());
  posix::DirOwner owner{entry.uid, entry.gid, 0700};
  boost::asio::post(blocking_, [fd, trash, owner] { (void)posix::remove_tree_at(fd->get(), trash, owner); });
}

void PrivateTmpStore::adopt_leftovers() {
  auto base_fd = posix::open_dir_nofollow(normalize_lexically(options_.base));
  if (!base_fd.ok()) return;
  std::lock_guard lock(mu_);
  const auto scan = [](int fd, const std::function<void(const std::string&, const struct stat&)>& each) {
    int list_fd = ::dup(fd);
    DIR* dir = list_fd >= 0 ? ::fdopendir(list_fd) : nullptr;
    if (!dir) {
      if (list_fd >= 0) ::close(list_fd);
      return;
    }
    while (struct dirent* e = ::readdir(dir)) {
      struct stat st {};
      std::string name = e->d_name;
      if (name == "." || name == ".." || ::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (S_ISDIR(st.st_mode)) each(name, st);
    }
    ::closedir(dir);
  };
  const std::string base = normalize_lexically(options_.base);
  scan(base_fd->get(), [&](const std::string& uid_name, const struct stat&) {
    auto uid_fd = posix::open_dir_nofollow(join_path(base, uid_name));
    if (!uid_fd.ok()) return;
    scan(uid_fd->get(), [&](const std::string& name, const struct stat& st) {
      const std::string path = join_path(join_path(base, uid_name), name);
      if (entries_.count(path)) return;
      Entry& entry = entries_[path];
      entry.uid = st.st_uid;
      entry.gid = st.st_gid;
      entry.idle_since = std::chrono::steady_clock::now();
      schedule(path, entry);
    });
  });
}

std::vector<PrivateTmpEntry> PrivateTmpStore::list(uid_t uid, bool all_users) const {
  std::lock_guard lock(mu_);
  std::vector<PrivateTmpEntry> out;
  const auto now = std::chrono::steady_clock::now();
  for (const auto& [path, entry] : entries_) {
    if (!all_users && entry.uid != uid) continue;
    PrivateTmpEntry e{entry.uid, entry.agent_id, path, entry.leases, std::nullopt};
    if (entry.leases == 0) {
      auto left = std::chrono::milliseconds(options_.grace_ms) - (now - entry.idle_since);
      e.removal_in_ms = std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(left).count());
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace codexd::orchestrator
