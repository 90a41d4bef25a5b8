// Where the Landlock backend lets a command change file metadata. Landlock does not govern
// chmod or chown, so the helper's seccomp filter hands those calls to the helper's keeper
// process (helper/metadata_keeper.h), which performs them through this class: only on a file
// that lies inside a writable root and not below a read-only path, never adding a setuid bit
// (or a setgid bit to a non-directory). Anywhere else the answer is EPERM, as without the keeper.
//
// The file is the keeper's own descriptor of it, opened once; the check and the change both
// act on that descriptor, so a symlink or rename swapped in between cannot redirect the change.
// The keeper has the command's credentials, so the kernel still applies its own rules (only
// the owner may chmod; chown only to a group of one's own).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/unique_fd.h"

namespace codexd::sandbox::linux_backend {

class WritableScope {
 public:
  // Opens the roots now (one that does not exist is left out: nothing below it can be changed).
  WritableScope(const std::vector<std::string>& writable, const std::vector<std::string>& read_only);

  // Change the mode / the owner and group (-1: unchanged) of `target` (any descriptor, O_PATH
  // included; a symlink's own for change_owner) if the scope allows it. Return 0 or the errno
  // that the command's call fails with.
  int change_mode(int target, mode_t mode) const;
  int change_owner(int target, uid_t owner, gid_t group) const;

  // Whether `target` lies inside a writable root and not below a read-only path, now.
  bool contains(int target) const;

 private:
  struct Root {
    std::string path;  // canonical, as the kernel names the open directory
    UniqueFd dir;
  };
  std::vector<Root> roots_;
  std::vector<std::string> read_only_;
};

}  // namespace codexd::sandbox::linux_backend
