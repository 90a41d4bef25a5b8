// The Landlock fallback's filesystem rules.
//
// Landlock only grants, and a right granted on a directory covers everything below it, so
// "write below the workspace except below .git" cannot be written as one rule. The helper
// therefore splits around every excluded path: on each directory between a writable root and
// an excluded path (the "spine") it grants nothing itself, and grants full write on each
// sibling entry that leads to no excluded path. Consequences (documented in docs/sandbox.md):
// existing entries on the spine stay writable (files) or fully writable (directories), but
// entries directly in a spine directory cannot be created, removed or renamed. For the cwd
// root that is every top-level entry, because `.codex` is always protected there.
// Reads are split the same way around unreadable paths, except that listing directories
// (READ_DIR) stays granted everywhere: names stay visible, contents do not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "platform/linux/helper_config.h"

namespace codexd::sandbox::linux_backend {

struct LandlockGrant {
  std::string path;
  uint64_t access = 0;
};

// Computes the grants for `config` at Landlock `abi` by listing the spine directories now.
std::vector<LandlockGrant> plan_landlock_grants(const HelperConfig& config, int abi);

// Creates the ruleset (filesystem rights of `abi`; TCP bind/connect handled unless the
// network is kHost, ABI >= 4, with connect granted only to `proxy_ports` (network kProxy);
// abstract-socket and signal scoping, ABI >= 6) and restricts the calling thread. Requires
// no_new_privs. kProxy below ABI 4 is refused: TCP could reach every host port.
Status apply_landlock(const std::vector<LandlockGrant>& grants, const HelperConfig& config, int abi,
                      const std::vector<uint16_t>& proxy_ports = {});

// Printable summary of what apply_landlock enforces at `abi` (for plans).
std::vector<std::string> describe_landlock(const HelperConfig& config, int abi);

}  // namespace codexd::sandbox::linux_backend
