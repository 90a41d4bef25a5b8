// Directories that codexd keeps for a user inside a tree of its own (the private per-agent
// /tmp): created, checked and removed through directory descriptors, never following a
// symlink, so a name a user controls can never redirect what a privileged daemon touches.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/status.h"
#include "base/unique_fd.h"

namespace codexd::posix {

// Who a directory must belong to and which permission bits it gets when created.
struct DirOwner {
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t mode = 0700;
};

// Opens the directory `name` (one component, no '/') below `parent_fd` with O_NOFOLLOW, making
// it first when it is missing (mkdirat, fchmod to owner.mode, then fchown to `owner` when the
// caller is root: needs CAP_CHOWN, not CAP_FOWNER or CAP_DAC_OVERRIDE). What is there must be a real directory owned by owner.uid whose mode
// grants nothing beyond owner.mode to group and others; otherwise PermissionDenied naming
// `what` and the reason ("is a symlink", "owner uid N", "mode 0777"), and nothing is changed.
Result<UniqueFd> open_owned_dir_at(int parent_fd, std::string_view name, const DirOwner& owner, std::string_view what);

// Opens the absolute directory `path` component by component from "/" with O_NOFOLLOW:
// PermissionDenied when any component is a symlink. Missing components are NotFound.
Result<UniqueFd> open_dir_nofollow(const std::string& path);

// Removes `name` below `parent_fd` and everything in it, never following a symlink (every
// directory is opened with O_NOFOLLOW relative to its parent's descriptor) and never below
// `max_depth` levels. Contents are removed with the filesystem identity `contents_as` (setfsuid
// and setfsgid on this thread only, restored before returning), so a root daemon removes a
// user's files with exactly that user's rights; `name` itself is removed with the caller's.
Status remove_tree_at(int parent_fd, std::string_view name, const DirOwner& contents_as, int max_depth = 128);

}  // namespace codexd::posix
