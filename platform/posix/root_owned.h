// "Only root can change this": the one ownership check behind every file codexd must trust
// (bwrap and the sandbox helper, sandbox-exec, the system-mode config and rules).
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/status.h"

namespace codexd::posix {

// Resolves `path` (realpath) and checks the result and every directory above it up to "/":
// each must be owned by root (or by `also_trusted_owner` when it is not 0, e.g. the daemon's
// own uid for binaries it runs itself) and carry no group or world write bit. The only
// exception is a sticky directory at least two levels up (/tmp, /var/tmp): others may add
// entries there but cannot rename or remove one they do not own. The file and its own
// directory never get that exception.
//
// Returns the canonical path. Errors: NotFound when `path` does not exist, the realpath/stat
// errno otherwise, and PermissionDenied worded
//   "<what> <path>: writable by someone other than root (owner uid 1000, mode 0664)"
//   "directory <dir> of <what> <path>: writable by someone other than root (...)"
// (with an empty `what`, just "<path>: ..."; with also_trusted_owner, "other than root and
// uid N").
Result<std::string> check_root_owned(const std::string& path, std::string_view what, uid_t also_trusted_owner = 0);

// check_root_owned for a program: `path` must also be absolute (InvalidArgument) and resolve
// to a regular file with its owner's execute bit (PermissionDenied "... is not a regular
// file" / "... is not executable"). Returns the canonical path.
Result<std::string> check_root_owned_executable(const std::string& path, std::string_view what,
                                                uid_t also_trusted_owner = 0);

}  // namespace codexd::posix
