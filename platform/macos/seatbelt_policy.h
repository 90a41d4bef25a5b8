// The SBPL policy generator: SandboxSpec -> the policy text for `sandbox-exec -p` plus the
// `-D` parameters it refers to. Plain C++ (no Apple API), so it is unit-tested on Linux.
//
// The text never contains a path. Every path (writable roots, protected subpaths, denied
// reads, codexd's socket directory) is a named parameter, `(param "WRITABLE_ROOT_0")`, whose
// value travels separately as `-DWRITABLE_ROOT_0=/real/path`. A path holding quotes,
// parentheses or newlines therefore cannot change the policy.
//
// Layout (sections joined with a blank line; Seatbelt lets the last matching rule win):
//   1. base policy (sbpl/base_policy.sbpl): deny default, processes, devices, sysctls, ...
//   2. reads: (allow file-read*), or everything under "/" except the denied paths
//   3. writes: one (subpath WRITABLE_ROOT_i) per root, each minus its protected subpaths
//      (.git, its gitdir, .codex, .agents) and any denied path, excluded both as `literal`
//      (so `mkdir .codex` is refused) and as `subpath`
//   4. network: only when the spec allows it (outbound, inbound, sbpl/network_policy.sbpl)
//   5. codexd's own socket directory: denied for files and unix-socket connects, last
//
// Parameter names: READABLE_ROOT_0[_EXCLUDED_j], WRITABLE_ROOT_i[_EXCLUDED_j],
// DARWIN_USER_CACHE_DIR, MASKED_PATH_k.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "platform/macos/seatbelt_paths.h"
#include "platform/sandbox/sandbox.h"

namespace codexd::sandbox::macos_backend {

struct SeatbeltParam {
  std::string name;
  std::string value;
  bool operator==(const SeatbeltParam&) const = default;
};

struct SeatbeltPolicy {
  std::string text;                   // for `-p`
  std::vector<SeatbeltParam> params;  // for `-DNAME=value`, in this order
  std::vector<std::string> rules;     // human-readable summary for plans and status
};

struct SeatbeltOptions {
  // The per-user cache directory (confstr(_CS_DARWIN_USER_CACHE_DIR)); when the network is
  // on, writes below it are allowed (TLS and URL caches live there). Unset: no such rule.
  std::optional<std::string> darwin_user_cache_dir;
  // Empty: resolve_for_seatbelt (realpath of the existing prefix).
  PathResolver resolve;
};

// Refuses danger-full-access (that runs unwrapped; the manager never asks for a policy) and
// a writable root that resolves to "/".
Result<SeatbeltPolicy> build_seatbelt_policy(const SandboxSpec& spec, const SeatbeltOptions& options);

}  // namespace codexd::sandbox::macos_backend
