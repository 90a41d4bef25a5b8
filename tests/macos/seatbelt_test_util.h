// Shared helpers for the Seatbelt tests: specs built by hand (no resolution on disk), an
// identity path resolver, and a structural check of a generated policy.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "platform/macos/seatbelt_policy.h"
#include "platform/macos/sbpl_resources.h"

namespace codexd::sandbox::macos_backend::testing {

// Paths are taken as already resolved, so expected texts do not depend on this machine.
inline Result<std::string> identity_resolver(const std::string& path) { return path; }

inline SeatbeltOptions identity_options() {
  SeatbeltOptions options;
  options.resolve = identity_resolver;
  return options;
}

inline SandboxSpec read_only_spec() {
  SandboxSpec spec;
  spec.mode = SandboxMode::kReadOnly;
  return spec;
}

inline SandboxSpec workspace_spec(std::vector<WritableRoot> roots, bool network = false) {
  SandboxSpec spec;
  spec.mode = SandboxMode::kWorkspaceWrite;
  spec.writable_roots = std::move(roots);
  spec.network = network ? NetworkMode::kHost : NetworkMode::kOff;
  return spec;
}

// The policy text after the base policy and its separating newline; fails the test when the
// text does not start with the base policy.
std::string dynamic_part(const std::string& policy_text);

// Parses the policy, checks (version 1) then only allow/deny forms, and that the parameters
// it refers to are exactly the ones passed with -D (each defined once).
void expect_well_formed(const SeatbeltPolicy& policy);

}  // namespace codexd::sandbox::macos_backend::testing
