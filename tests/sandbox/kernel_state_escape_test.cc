// Host-global kernel state: tunables, hostname, sysfs, sysrq. Each probe writes the current
// value back, so even the control changes nothing.
#include <gtest/gtest.h>
#include <sys/shm.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "platform/linux/linux_sandbox_manager.h"
#include "tests/sandbox/backend_param.h"
#include "tests/sandbox/escape_expect.h"

namespace codexd::sandbox::testing {
namespace {

class KernelStateEscape : public BackendTest {
 protected:
  void SetUp() override {
    ws_ = dir_.make_dir("ws");
    if (::geteuid() != 0) GTEST_SKIP() << "the controls need root";
  }
  ScratchDir dir_;
  std::string ws_;
};

TEST_P(KernelStateEscape, NoProcSysWrites) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  // Codex 0.169 leaves /proc/sys writable for root (kernel.core_pattern runs a program as
  // host root on the next crash).
  expect_blocked(*manager, make_spec(ws_), ws_, {"rewrite", "/proc/sys/kernel/printk_ratelimit"});
  expect_blocked(*manager, make_spec(ws_), ws_, {"rewrite", "/proc/sys/kernel/core_pattern"});
}

TEST_P(KernelStateEscape, NoHostnameChange) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  expect_blocked(*manager, make_spec(ws_), ws_, {"sethostname"});
}

TEST_P(KernelStateEscape, NoSysfsWrites) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  const char* knob = "/sys/kernel/mm/ksm/run";
  if (::access(knob, W_OK) != 0) GTEST_SKIP() << knob << " not writable on this host";
  expect_blocked(*manager, make_spec(ws_), ws_, {"rewrite", knob});
}

TEST_P(KernelStateEscape, NoSysrq) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  if (::access("/proc/sysrq-trigger", F_OK) != 0) {
    GTEST_SKIP() << "kernel built without CONFIG_MAGIC_SYSRQ: /proc/sysrq-trigger absent";
  }
  // 'h' only prints help to the kernel log.
  expect_blocked(*manager, make_spec(ws_), ws_, {"write", "/proc/sysrq-trigger", "h"});
}

// System V IPC is host-global without an IPC namespace: ids are small and guessable, so a
// command could attach (or remove) a host process's segment. bwrap gives the sandbox its own
// namespace; the Landlock backend refuses System V IPC altogether.
TEST_P(KernelStateEscape, NoHostSysvSharedMemory) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  const int id = ::shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
  ASSERT_GE(id, 0) << std::strerror(errno);
  expect_blocked(*manager, make_spec(ws_), ws_, {"shm-attach", std::to_string(id)}, [&] {
    shmid_ds stat{};
    EXPECT_EQ(::shmctl(id, IPC_STAT, &stat), 0) << "the host segment is gone: " << std::strerror(errno);
  });
  ::shmctl(id, IPC_RMID, nullptr);
}

TEST_P(KernelStateEscape, SysvIpcIsPrivateUnderBwrapAndRefusedUnderLandlock) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  if (GetParam() == TestBackend::kBwrap) {
    expect_allowed(*manager, make_spec(ws_), ws_, {"shm-create"});  // in the sandbox's own namespace
  } else {
    expect_blocked(*manager, make_spec(ws_), ws_, {"shm-create"});
  }
}

TEST_P(KernelStateEscape, ProcSysStaysReadable) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  expect_allowed(*manager, make_spec(ws_), ws_, {"read", "/proc/sys/kernel/ostype"});
}

CODEXD_INSTANTIATE_BOTH_BACKENDS(KernelStateEscape);

// The no-/proc fallback (used when bwrap cannot mount proc, e.g. in some containers) must
// not expose the host /proc instead.
TEST(NoProcFallback, HostProcIsNeverExposed) {
  SandboxManagerOptions options;
  options.helper_path = helper_path();
  options.preference = BackendPreference::kBwrap;
  linux_backend::LinuxSandboxOptions linux_options;
  linux_options.force_no_proc = true;
  std::unique_ptr<SandboxManager> manager = linux_backend::create_linux_sandbox_manager(options, linux_options);
  if (manager->capabilities().chosen != Backend::kLinuxBwrap) GTEST_SKIP() << "bwrap unusable";
  EXPECT_FALSE(linux_backend::linux_capabilities(*manager)->proc_mount_usable);
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  Victim victim(ws);
  SandboxSpec spec = make_spec(ws);
  expect_blocked(*manager, spec, ws, {"read", "/proc/" + std::to_string(victim.pid()) + "/cmdline"});
  if (::geteuid() == 0) {
    expect_blocked(*manager, spec, ws, {"rewrite", "/proc/sys/kernel/printk_ratelimit"});
  }
}

}  // namespace
}  // namespace codexd::sandbox::testing
