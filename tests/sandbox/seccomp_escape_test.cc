// The helper's seccomp filter, observed from inside: refused calls fail with EPERM (or
// ENOSYS for clone3), foreign ABIs die with SIGSYS.
#include <gtest/gtest.h>
#include <signal.h>

#include "tests/sandbox/backend_param.h"
#include "tests/sandbox/escape_expect.h"

namespace codexd::sandbox::testing {
namespace {

// How a process died: directly (Landlock: the helper execs the command) or as reported by
// bwrap's init, which exits with 128 + the signal.
int death_signal(const RunResult& run) {
  if (run.term_signal != 0) return run.term_signal;
  return run.exit_code > 128 ? run.exit_code - 128 : 0;
}

class SeccompEscape : public BackendTest {
 protected:
  void SetUp() override { ws_ = dir_.make_dir("ws"); }
  ScratchDir dir_;
  std::string ws_;
};

TEST_P(SeccompEscape, X32AbiIsKilled) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  // x32 numbers (nr | 0x40000000) with the x86_64 audit arch: killed even though this kernel
  // lacks x32 (the control then gets ENOSYS, not SIGSYS).
  RunResult run = run_probe_sandboxed(*manager, spec, ws_, {"x32-getpid"});
  EXPECT_EQ(death_signal(run), SIGSYS) << run.describe();
  RunResult control = run_probe_unsandboxed(ws_, {"x32-getpid"});
  EXPECT_EQ(death_signal(control), 0) << control.describe();
}

TEST_P(SeccompEscape, I386AbiIsKilled) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  RunResult control = run_probe_unsandboxed(ws_, {"int80-getpid"});
  if (!control.succeeded()) {
    GTEST_SKIP() << "int 0x80 (i386 ABI) unavailable on this kernel even without the filter: "
                 << control.describe();
  }
  RunResult run = run_probe_sandboxed(*manager, spec, ws_, {"int80-getpid"});
  EXPECT_EQ(death_signal(run), SIGSYS) << run.describe();
}

TEST_P(SeccompEscape, KernelAttackSurfaceIsRefused) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  for (const char* probe : {"personality", "bpf", "perf", "keyctl"}) {
    expect_blocked(*manager, spec, ws_, {probe});
  }
  RunResult control = run_probe_unsandboxed(ws_, {"io_uring"});
  RunResult run = run_probe_sandboxed(*manager, spec, ws_, {"io_uring"});
  EXPECT_FALSE(run.succeeded()) << run.describe();
  if (!control.succeeded()) GTEST_SKIP() << "io_uring disabled on this host: " << control.describe();
}

TEST_P(SeccompEscape, Clone3FallsBackToEnosys) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  RunResult run = run_probe_sandboxed(*manager, make_spec(ws_), ws_, {"clone3"});
  EXPECT_NE(run.output.find("clone3 errno 38"), std::string::npos) << run.describe();
  RunResult control = run_probe_unsandboxed(ws_, {"clone3"});
  EXPECT_EQ(control.output.find("clone3 errno 38"), std::string::npos) << control.describe();
}

TEST_P(SeccompEscape, NoTerminalInputInjection) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  RunResult control = run_probe_unsandboxed(ws_, {"tiocsti"});
  if (!control.succeeded()) GTEST_SKIP() << "TIOCSTI unavailable even unsandboxed: " << control.describe();
  expect_blocked(*manager, make_spec(ws_), ws_, {"tiocsti"});
}

TEST_P(SeccompEscape, NetworkOnStillRefusesTheRest) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SpecOptions options;
  options.network = NetworkMode::kHost;
  SandboxSpec spec = make_spec(ws_, options);
  expect_blocked(*manager, spec, ws_, {"bpf"});
  expect_blocked(*manager, spec, ws_, {"unshare-user"});
}

CODEXD_INSTANTIATE_BOTH_BACKENDS(SeccompEscape);

}  // namespace
}  // namespace codexd::sandbox::testing
