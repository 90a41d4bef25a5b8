// The shape of every escape test: the probe fails inside the sandbox and the host is
// unchanged, then the same probe succeeds without the sandbox (the control), which proves the
// sandbox -- not a broken probe -- stopped it.
#pragma once

#include <gtest/gtest.h>

#include <functional>

#include "tests/sandbox/sandbox_test_support.h"

namespace codexd::sandbox::testing {

inline std::string joined(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) out += a + " ";
  return out;
}

// `control_args` empty: the control repeats `args`.
inline void expect_blocked(const SandboxManager& manager, const SandboxSpec& spec, const std::string& cwd,
                           const std::vector<std::string>& args,
                           const std::function<void()>& host_unchanged = {},
                           std::vector<std::string> control_args = {}, const RunOptions& options = {}) {
  SCOPED_TRACE("probe " + joined(args));
  RunResult sandboxed = run_probe_sandboxed(manager, spec, cwd, args, options);
  EXPECT_FALSE(sandboxed.succeeded()) << "ESCAPE: " << sandboxed.describe();
  EXPECT_NE(sandboxed.exit_code, 2) << "probe usage error: " << sandboxed.describe();
  if (host_unchanged) host_unchanged();
  if (control_args.empty()) control_args = args;
  RunResult control = run_probe_unsandboxed(cwd, control_args, options);
  EXPECT_TRUE(control.succeeded()) << "control failed (the probe cannot do this even unsandboxed): "
                                   << control.describe();
}

inline void expect_allowed(const SandboxManager& manager, const SandboxSpec& spec, const std::string& cwd,
                           const std::vector<std::string>& args, const RunOptions& options = {}) {
  SCOPED_TRACE("probe " + joined(args));
  RunResult sandboxed = run_probe_sandboxed(manager, spec, cwd, args, options);
  EXPECT_TRUE(sandboxed.succeeded()) << sandboxed.describe();
}

}  // namespace codexd::sandbox::testing
