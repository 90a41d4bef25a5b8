// Decides whether an executable may be trusted to enforce the sandbox: it and every
// directory above it must be owned by root (or by the daemon's own uid) and not writable by
// anyone else, so that no other user and no sandboxed command can swap it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/status.h"

namespace codexd::sandbox::linux_backend {

// posix::check_root_owned_executable with the daemon's uid as a second trusted owner: returns
// the canonical path of `path` when trusted; InvalidArgument/PermissionDenied/NotFound
// otherwise.
Result<std::string> verify_trusted_executable(const std::string& path, uid_t also_trusted_owner);

// Finds bwrap among `candidates` (absolute paths only; empty: /usr/bin/bwrap,
// /usr/local/bin/bwrap, /bin/bwrap). Never consults PATH. A candidate inside `forbidden_dir`
// (the daemon's working directory) is rejected. Rejections are appended to `warnings`.
Result<std::string> find_trusted_bwrap(const std::vector<std::string>& candidates,
                                       const std::string& forbidden_dir,
                                       std::vector<std::string>* warnings);

}  // namespace codexd::sandbox::linux_backend
