// Process isolation and privilege: signals, ptrace, /proc views of host processes, mount,
// chroot, nested namespaces, capabilities and setuid gain.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "platform/linux/landlock_sys.h"
#include "tests/sandbox/backend_param.h"
#include "tests/sandbox/escape_expect.h"

namespace codexd::sandbox::testing {
namespace {

constexpr uid_t kNobody = 65534;

class ProcessEscape : public BackendTest {
 protected:
  void SetUp() override { ws_ = dir_.make_dir("ws"); }
  ScratchDir dir_;
  std::string ws_;
};

TEST_P(ProcessEscape, NoSignalToHostProcesses) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  if (GetParam() == TestBackend::kLandlock && linux_backend::landlock_abi_version() < 6) {
    GTEST_SKIP() << "Landlock ABI < 6 cannot scope signals (known gap of the fallback)";
  }
  Victim victim(ws_);
  expect_blocked(*manager, make_spec(ws_), ws_, {"kill", std::to_string(victim.pid())});
  expect_blocked(*manager, make_spec(ws_), ws_, {"kill", std::to_string(::getpid())});
}

TEST_P(ProcessEscape, NoPtraceOfHostProcesses) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  Victim victim(ws_);
  expect_blocked(*manager, make_spec(ws_), ws_, {"ptrace", std::to_string(victim.pid())});
  expect_blocked(*manager, make_spec(ws_), ws_, {"ptrace-traceme"});
}

TEST_P(ProcessEscape, NoProcViewOfHostProcesses) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  Victim victim(ws_);
  std::string proc = "/proc/" + std::to_string(victim.pid());
  // environ needs ptrace-read access: refused by both backends.
  expect_blocked(*manager, make_spec(ws_), ws_, {"read", proc + "/environ"});
  if (GetParam() == TestBackend::kLandlock) {
    GTEST_SKIP() << "Landlock has no pid namespace: host pids stay listed in /proc (documented)";
  }
  expect_blocked(*manager, make_spec(ws_), ws_, {"read", proc + "/cmdline"});
  expect_blocked(*manager, make_spec(ws_), ws_, {"list", proc});
}

// Every process the command can see is filtered (bwrap's own reaper would not be).
TEST_P(ProcessEscape, NoUnfilteredProcessInside) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  if (GetParam() == TestBackend::kLandlock) {
    GTEST_SKIP() << "Landlock has no pid namespace: host processes are visible (but outside the "
                    "Landlock domain, so ptrace and /proc/<pid>/mem are refused)";
  }
  expect_blocked(*manager, make_spec(ws_), ws_, {"unfiltered-process"});
}

TEST_P(ProcessEscape, NoMountOrChroot) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  std::string target = dir_.make_dir("ws/mnt");
  std::string control = dir_.make_dir("control-mnt");
  expect_blocked(*manager, make_spec(ws_), ws_, {"mount", target}, {}, {"mount", control});
  ::umount2(control.c_str(), MNT_DETACH);
  expect_blocked(*manager, make_spec(ws_), ws_, {"chroot"});
}

TEST_P(ProcessEscape, NoNestedNamespaces) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  expect_blocked(*manager, spec, ws_, {"unshare-user"});
  expect_blocked(*manager, spec, ws_, {"unshare-mount"});
  expect_blocked(*manager, spec, ws_, {"clone-newuser"});
}

TEST_P(ProcessEscape, NoCapabilitiesInsideEvenAsRoot) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for the control";
  expect_blocked(*manager, make_spec(ws_), ws_, {"caps"});
}

// A non-root command cannot become root through a setuid-root binary.
TEST_P(ProcessEscape, NoSetuidGain) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create a setuid-root binary";
  std::string suid = dir_.sub("suid-probe");
  std::filesystem::copy_file(probe_path(), suid);
  ASSERT_EQ(::chown(suid.c_str(), 0, 0), 0);
  ASSERT_EQ(::chmod(suid.c_str(), 04755), 0);
  RunOptions as_nobody;
  as_nobody.uid = kNobody;
  // The workspace belongs to the user the sandbox runs as (bwrap creates mount points in it).
  ASSERT_EQ(::chown(ws_.c_str(), kNobody, kNobody), 0);
  // The cleanest form: the whole sandbox runs as nobody, which then execs the setuid binary.
  RunResult sandboxed = run_plan(make_plan(*manager, make_spec(ws_), {suid, "euid"}, ws_), as_nobody);
  EXPECT_FALSE(sandboxed.succeeded()) << "ESCAPE: " << sandboxed.describe();
  EXPECT_NE(sandboxed.output.find("EUID 65534"), std::string::npos) << sandboxed.describe();
  RunResult control = run_unsandboxed({suid, "euid"}, ws_, as_nobody);
  EXPECT_TRUE(control.succeeded()) << control.describe();
}

// File capabilities grant nothing inside either.
TEST_P(ProcessEscape, NoFileCapabilityGain) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  if (::geteuid() != 0 || ::access("/usr/sbin/setcap", X_OK) != 0) GTEST_SKIP() << "needs root and setcap";
  std::string fcap = dir_.sub("fcap-probe");
  std::filesystem::copy_file(probe_path(), fcap);
  ::chmod(fcap.c_str(), 0755);
  std::string command = "/usr/sbin/setcap cap_net_raw+ep " + fcap;
  if (std::system(command.c_str()) != 0) GTEST_SKIP() << "setcap failed (filesystem without xattrs?)";
  RunOptions as_nobody;
  as_nobody.uid = kNobody;
  ASSERT_EQ(::chown(ws_.c_str(), kNobody, kNobody), 0);
  RunResult sandboxed = run_plan(make_plan(*manager, make_spec(ws_), {fcap, "caps"}, ws_), as_nobody);
  EXPECT_FALSE(sandboxed.succeeded()) << "ESCAPE: " << sandboxed.describe();
  RunResult control = run_unsandboxed({fcap, "caps"}, ws_, as_nobody);
  EXPECT_TRUE(control.succeeded()) << control.describe();
}

CODEXD_INSTANTIATE_BOTH_BACKENDS(ProcessEscape);

}  // namespace
}  // namespace codexd::sandbox::testing
