// Paths as Seatbelt sees them. The kernel matches file rules against resolved paths
// (/var/folders/... is really /private/var/folders/..., /tmp is /private/tmp), so every path
// that goes into a policy parameter is resolved first, the way Codex canonicalizes its
// WRITABLE_ROOT_i values.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace codexd::sandbox::macos_backend {

// Maps an absolute path to the form the kernel reports. Injected so tests can run the
// generator without touching the filesystem.
using PathResolver = std::function<Result<std::string>(const std::string&)>;

// realpath() of the longest existing prefix, followed by the (lexically normalized) part that
// does not exist yet: a protected `.codex` that is still missing must match once created.
Result<std::string> resolve_for_seatbelt(const std::string& path);

// Every form of `path` an exclusion has to name: the resolved path and, when the last
// component is a symlink, the link itself (resolved parent + name). Excluding only the target
// would let a command delete the link and put a real directory in its place.
Result<std::vector<std::string>> exclusion_forms(const std::string& path, const PathResolver& resolve);

}  // namespace codexd::sandbox::macos_backend
