#include "platform/linux/trusted_executable.h"

#include <unistd.h>

#include "platform/posix/root_owned.h"
#include "platform/sandbox/path_utils.h"

namespace codexd::sandbox::linux_backend {

Result<std::string> verify_trusted_executable(const std::string& path, uid_t also_trusted_owner) {
  return posix::check_root_owned_executable(path, "", also_trusted_owner);
}

Result<std::string> find_trusted_bwrap(const std::vector<std::string>& candidates,
                                       const std::string& forbidden_dir,
                                       std::vector<std::string>* warnings) {
  static const std::vector<std::string> kDefaults = {"/usr/bin/bwrap", "/usr/local/bin/bwrap",
                                                     "/bin/bwrap"};
  const std::vector<std::string>& list = candidates.empty() ? kDefaults : candidates;
  for (const std::string& candidate : list) {
    if (candidate.empty() || candidate.front() != '/') {
      warnings->push_back("ignored relative bwrap candidate '" + candidate + "'");
      continue;
    }
    if (::access(candidate.c_str(), F_OK) != 0) continue;
    Result<std::string> trusted = verify_trusted_executable(candidate, ::geteuid());
    if (!trusted.ok()) {
      warnings->push_back("untrusted bwrap ignored: " + trusted.status().message());
      continue;
    }
    if (!forbidden_dir.empty() && forbidden_dir != "/" && is_same_or_under(*trusted, forbidden_dir)) {
      warnings->push_back("bwrap inside the working directory ignored: " + *trusted);
      continue;
    }
    return *trusted;
  }
  return NotFound("bubblewrap (bwrap) not found in trusted locations");
}

}  // namespace codexd::sandbox::linux_backend
