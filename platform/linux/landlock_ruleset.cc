#include "platform/linux/landlock_ruleset.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <unistd.h>

#include "platform/linux/landlock_sys.h"
#include "base/unique_fd.h"
#include "platform/sandbox/path_utils.h"

namespace codexd::sandbox::linux_backend {
namespace {

bool is_strictly_under(const std::string& path, const std::string& base) {
  return path != base && is_same_or_under(path, base);
}

bool is_excluded(const std::string& path, const std::vector<std::string>& excluded) {
  for (const std::string& e : excluded) {
    if (is_same_or_under(path, e)) return true;
  }
  return false;
}

bool leads_to_excluded(const std::string& path, const std::vector<std::string>& excluded) {
  for (const std::string& e : excluded) {
    if (is_strictly_under(e, path)) return true;
  }
  return false;
}

std::vector<std::string> list_directory(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* entry = ::readdir(d)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// Grants `rights` on every entry below `dir` that neither is nor leads to an excluded path,
// recursing along the spine. Symlinks on the spine are skipped: following one would grant
// rights on wherever it points.
void grant_around(const std::string& dir, const std::vector<std::string>& excluded, uint64_t rights,
                  std::vector<LandlockGrant>* out) {
  for (const std::string& name : list_directory(dir)) {
    std::string path = join_path(dir, name);
    if (is_excluded(path, excluded)) continue;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
    if (leads_to_excluded(path, excluded)) {
      if (S_ISDIR(st.st_mode)) grant_around(path, excluded, rights, out);
      continue;
    }
    uint64_t access = S_ISDIR(st.st_mode) ? rights : (rights & landlock::kFileOnlyRights);
    if (access != 0) out->push_back({path, access});
  }
}

// A protected path that is a symlink protects what it names too (resolved now, at exec
// time); a dangling one protects its would-be target so that it cannot be created.
std::vector<std::string> with_symlink_targets(const std::vector<std::string>& paths) {
  std::vector<std::string> out = paths;
  for (const std::string& path : paths) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) continue;
    Result<std::optional<std::string>> real = canonicalize_existing(path);
    if (real.ok() && real->has_value()) {
      out.push_back(**real);
      continue;
    }
    char buf[4096];
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
    if (n <= 0) continue;
    std::string link(buf, static_cast<size_t>(n));
    out.push_back(normalize_lexically(link.front() == '/' ? link : join_path(parent_path(path), link)));
  }
  return out;
}

void grant_tree(const std::string& root, const std::vector<std::string>& excluded, uint64_t rights,
                std::vector<LandlockGrant>* out) {
  if (is_excluded(root, excluded)) return;
  if (leads_to_excluded(root, excluded)) {
    grant_around(root, excluded, rights, out);
  } else {
    out->push_back({root, rights});
  }
}

}  // namespace

std::vector<LandlockGrant> plan_landlock_grants(const HelperConfig& config, int abi) {
  std::vector<LandlockGrant> grants;
  uint64_t handled = landlock::handled_fs_rights(abi);

  if (config.unreadable.empty()) {
    grants.push_back({"/", landlock::kReadRights & handled});
  } else {
    grants.push_back({"/", landlock::kReadDir & handled});
    grant_tree("/", config.unreadable, (landlock::kReadFile | landlock::kExecute) & handled, &grants);
  }

  std::vector<std::string> no_write = with_symlink_targets(config.read_only);
  no_write.insert(no_write.end(), config.unreadable.begin(), config.unreadable.end());
  uint64_t write = landlock::write_rights(abi);
  for (const std::string& root : config.writable) grant_tree(root, no_write, write, &grants);
  for (const std::string& file : config.writable_files) {
    if (!is_excluded(file, no_write)) {
      grants.push_back({file, (landlock::kWriteFile | landlock::kTruncate) & handled});
    }
  }
  return grants;
}

Status add_proxy_port_rules(int ruleset, const std::vector<uint16_t>& proxy_ports) {
  for (uint16_t port : proxy_ports) {
    if (landlock_add_net_port_rule(ruleset, port, landlock::kNetConnectTcp) != 0) {
      return ErrnoStatus("landlock_add_rule net port " + std::to_string(port), errno);
    }
  }
  return Status::Ok();
}

Status apply_landlock(const std::vector<LandlockGrant>& grants, const HelperConfig& config, int abi,
                      const std::vector<uint16_t>& proxy_ports) {
  if (abi < 1) return Unavailable("Landlock is not available in this kernel");
  if (config.network == NetworkMode::kProxy && abi < 4) {
    return Unavailable("network mode proxy needs Landlock ABI 4 (TCP rules); this kernel has ABI " +
                       std::to_string(abi));
  }
  uint64_t handled_fs = landlock::handled_fs_rights(abi);
  uint64_t handled_net = (config.network != NetworkMode::kHost && abi >= 4)
                             ? (landlock::kNetBindTcp | landlock::kNetConnectTcp) : 0;
  uint64_t scoped =
      abi >= 6 ? (landlock::kScopeAbstractUnixSocket | landlock::kScopeSignal) : 0;
  UniqueFd ruleset(landlock_create_ruleset_fd(handled_fs, handled_net, scoped, abi));
  if (!ruleset.valid()) return ErrnoStatus("landlock_create_ruleset", errno);

  for (const LandlockGrant& grant : grants) {
    UniqueFd fd(::open(grant.path.c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW));
    if (!fd.valid()) {
      if (errno == ENOENT || errno == ELOOP) continue;  // vanished or became a symlink: grant less
      return ErrnoStatus("landlock open " + grant.path, errno);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return ErrnoStatus("landlock fstat " + grant.path, errno);
    if (S_ISLNK(st.st_mode)) continue;  // swapped for a symlink since planning: grant less
    uint64_t access = grant.access & handled_fs;
    if (!S_ISDIR(st.st_mode)) access &= landlock::kFileOnlyRights;
    if (access == 0) continue;
    if (landlock_add_path_rule(ruleset.get(), fd.get(), access) != 0) {
      return ErrnoStatus("landlock_add_rule " + grant.path, errno);
    }
  }
  if (config.network == NetworkMode::kProxy) CODEXD_RETURN_IF_ERROR(add_proxy_port_rules(ruleset.get(), proxy_ports));
  if (landlock_restrict_self_fd(ruleset.get()) != 0) return ErrnoStatus("landlock_restrict_self", errno);
  return Status::Ok();
}

std::vector<std::string> describe_landlock(const HelperConfig& config, int abi) {
  std::vector<std::string> lines;
  lines.push_back("landlock: ABI " + std::to_string(abi) + "; read everywhere" +
                  (config.unreadable.empty() ? "" : " except file contents below the unreadable paths"));
  for (const std::string& root : config.writable) lines.push_back("landlock: write below " + root);
  for (const std::string& path : config.read_only) {
    lines.push_back("landlock: no write below " + path +
                    " (entries directly in its parent directories cannot be created/removed)");
  }
  for (const std::string& path : config.unreadable) lines.push_back("landlock: no read/write below " + path);
  for (const std::string& file : config.writable_files) lines.push_back("landlock: write file " + file);
  if (abi < 2) lines.push_back("landlock: ABI < 2: cross-directory rename/link always refused");
  if (abi < 3) lines.push_back("landlock: ABI < 3: truncate() not restricted");
  if (config.network == NetworkMode::kOff) {
    lines.push_back(abi >= 4 ? "landlock: TCP bind/connect refused"
                             : "landlock: ABI < 4: TCP not restricted by Landlock (seccomp still refuses sockets)");
  } else if (config.network == NetworkMode::kProxy) {
    lines.push_back(abi >= 4 ? "landlock: TCP bind refused; TCP connect only to the two proxy ports "
                               "(ephemeral ports on the host's loopback, opened by the helper)"
                             : "landlock: ABI < 4: network mode proxy cannot be enforced (refused at start)");
  }
  if (abi >= 6) {
    lines.push_back(config.metadata_keeper
                        ? "landlock: signals and abstract Unix sockets scoped to the sandbox; the command's signals "
                          "also scoped away from its keeper (a domain of its own)"
                        : "landlock: signals and abstract Unix sockets scoped to the sandbox");
  } else {
    lines.push_back("landlock: ABI < 6: signals to host processes of the same uid are NOT blocked"
                    " (nor to the command's keeper)");
  }
  return lines;
}

}  // namespace codexd::sandbox::linux_backend
