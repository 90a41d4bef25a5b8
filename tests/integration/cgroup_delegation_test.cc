// Where codexd's cgroup tree comes from (docs/sandbox.md "Resource limits"): a cgroup systemd
// delegated to it (Delegate=yes: the daemon moves into <cgroup>/daemon, sessions go beside it
// into <cgroup>/sessions), a transient scope it asks the user's systemd for in user mode, or
// the rlimit fallback with the reason when systemd gives none. The systemd tests need systemd
// as PID 1 and skip with the reason elsewhere; the delegated-cgroup test marks a fresh v2
// cgroup the way systemd does (the trusted.delegate xattr) and needs root.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "codexd/v1/admin.grpc.pb.h"
#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"
#include "tests/support/temp_dir.h"

namespace codexd::testing {
namespace {

v1::GetStatusResponse status_of(const TestDaemon& daemon) { return get_status(daemon.channel()); }

// The line of the v2 hierarchy ("0::/path") of /proc/<pid>/cgroup, without "0::".
std::string v2_path_of(const std::string& proc_cgroup_text) {
  std::istringstream lines(proc_cgroup_text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return "";
}

// Where the v2 hierarchy is mounted ("" when none).
std::string v2_mount() {
  std::istringstream mounts(read_text_file("/proc/self/mounts"));
  for (std::string line; std::getline(mounts, line);) {
    std::istringstream fields(line);
    std::string device, dir, type;
    fields >> device >> dir >> type;
    if (type == "cgroup2") return dir;
  }
  return "";
}

std::string skip_reason_without_systemd() {
  std::string init = read_text_file("/proc/1/comm");
  if (init != "systemd\n") return "PID 1 is not systemd (it is \"" + init.substr(0, init.find('\n')) + "\")";
  return "";
}

// What the session's command reports of its own v2 cgroup.
std::string session_v2_path(const TestDaemon& daemon) {
  auto stub = v1::Exec::NewStub(daemon.channel());
  ExecCall call = exec_command(*stub, shell_request(daemon, "cat /proc/self/cgroup", 10'000));
  EXPECT_TRUE(call.status.ok()) << describe(call.status);
  EXPECT_TRUE(call.result.has_exit_code()) << call.result.text();
  return v2_path_of(call.result.output());
}

// A fresh v2 cgroup marked the way systemd marks a unit's cgroup with Delegate=yes.
class DelegatedCgroup {
 public:
  DelegatedCgroup() {
    const std::string mount = v2_mount();
    if (mount.empty()) {
      why_not_ = "no cgroup v2 hierarchy is mounted";
      return;
    }
    relative_ = v2_path_of(read_text_file("/proc/self/cgroup"));
    relative_ = (relative_ == "/" ? "" : relative_) + "/codexd-delegated-" + std::to_string(::getpid());
    dir_ = mount + relative_;
    if (::mkdir(dir_.c_str(), 0755) != 0) {
      why_not_ = "cannot make " + dir_ + ": " + std::strerror(errno);
      dir_.clear();
      return;
    }
    if (::setxattr(dir_.c_str(), "trusted.delegate", "1", 1, 0) != 0) {
      why_not_ = "cannot set trusted.delegate on " + dir_ + " (root and Linux >= 5.7 needed): " + std::strerror(errno);
    }
  }
  ~DelegatedCgroup() {
    if (dir_.empty()) return;
    ::rmdir((dir_ + "/daemon").c_str());
    ::rmdir((dir_ + "/sessions").c_str());
    ::rmdir(dir_.c_str());
  }
  const std::string& why_not() const { return why_not_; }
  const std::string& dir() const { return dir_; }
  const std::string& relative() const { return relative_; }

 private:
  std::string dir_, relative_, why_not_;
};

// System mode's Delegate=yes, on any machine with cgroup v2: the daemon started in a delegated
// cgroup moves into its daemon/ leaf, its sessions land in sessions/<agent>/ beside it, the
// status says so, and shutdown leaves nothing of the sessions.
TEST(CgroupDelegation, DelegatedCgroupHoldsTheDaemonLeafAndTheSessionsBesideIt) {
  DelegatedCgroup cgroup;
  if (!cgroup.why_not().empty()) GTEST_SKIP() << cgroup.why_not();
  TestDaemonOptions options = unsandboxed();
  options.start_in_cgroup = cgroup.dir();
  options.extra_config = "[limits]\ndaemon_memory_min = \"32M\"\n";
  TestDaemon daemon(options);
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto status = status_of(daemon);
  if (status.limits().mechanism().rfind("cgroup", 0) != 0) GTEST_SKIP() << "no usable cgroup: " << status.limits().reason();
  EXPECT_THAT(status.limits().reason(), ::testing::HasSubstr("delegated by systemd (Delegate=yes)"));
  EXPECT_EQ(v2_path_of(read_text_file("/proc/" + std::to_string(daemon.pid()) + "/cgroup")), cgroup.relative() + "/daemon");
  EXPECT_THAT(session_v2_path(daemon), ::testing::MatchesRegex(cgroup.relative() + "/sessions/integration-test/g[0-9]+-[0-9]+/command"));
  if (::access((cgroup.dir() + "/daemon/memory.min").c_str(), F_OK) == 0) {
    EXPECT_EQ(read_text_file(cgroup.dir() + "/daemon/memory.min"), std::to_string(32 << 20) + "\n");
  } else {
    std::printf("note: no memory controller in this v2 hierarchy; memory.min not checked\n");
  }
  auto codexctl = daemon.codexctl({"status"});
  EXPECT_THAT(codexctl.out, ::testing::HasSubstr("delegated by systemd"));
  EXPECT_EQ(daemon.stop(), 0) << daemon.daemon_log();
  EXPECT_FALSE(std::ifstream(cgroup.dir() + "/sessions/cgroup.procs").good()) << "the sessions' tree outlived shutdown";
}

// User mode, no user bus (a container, no login session): the scope request fails, the daemon
// falls back to rlimits and says why in the status, codexctl status and the log.
TEST(CgroupDelegation, UserModeWithoutAUserBusFallsBackToRlimitsAndSaysWhy) {
  TestDaemonOptions options = unsandboxed();
  options.extra_config = "[limits]\nsystemd_scope = \"always\"\n";
  options.env = {"DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/codexd-test-bus"};
  TestDaemon daemon(options);
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto status = status_of(daemon);
  EXPECT_EQ(status.limits().mechanism(), "rlimit");
  EXPECT_THAT(status.limits().reason(), ::testing::HasSubstr("no delegated cgroup from systemd"));
  EXPECT_THAT(status.limits().reason(), ::testing::HasSubstr("no user bus"));
  ASSERT_FALSE(status.limits().warnings().empty());
  EXPECT_THAT(status.limits().warnings(0), ::testing::HasSubstr("rlimits"));
  EXPECT_THAT(daemon.daemon_log(), ::testing::HasSubstr("no delegated cgroup from systemd"));
  auto codexctl = daemon.codexctl({"status"});
  EXPECT_THAT(codexctl.out, ::testing::HasSubstr("no delegated cgroup from systemd"));
  EXPECT_EQ(daemon.stop(), 0) << daemon.daemon_log();
}

// User mode under a real user systemd: the daemon gets a transient scope with Delegate=yes and
// its sessions live in it.
TEST(CgroupDelegation, UserModeGetsADelegatedScopeFromTheUserSystemd) {
  if (auto why = skip_reason_without_systemd(); !why.empty()) GTEST_SKIP() << why;
  TestDaemonOptions options = unsandboxed();
  options.extra_config = "[limits]\nsystemd_scope = \"always\"\n";
  TestDaemon daemon(options);
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto status = status_of(daemon);
  if (status.limits().mechanism() == "rlimit") GTEST_SKIP() << "no user systemd here: " << status.limits().reason();
  EXPECT_THAT(status.limits().reason(), ::testing::HasSubstr("delegated by systemd"));
  const std::string daemon_cgroup = v2_path_of(read_text_file("/proc/" + std::to_string(daemon.pid()) + "/cgroup"));
  EXPECT_THAT(daemon_cgroup, ::testing::EndsWith(".scope/daemon"));
  const std::string scope = daemon_cgroup.substr(0, daemon_cgroup.size() - std::strlen("/daemon"));
  EXPECT_THAT(session_v2_path(daemon), ::testing::StartsWith(scope + "/sessions/"));
  EXPECT_EQ(daemon.stop(), 0) << daemon.daemon_log();
}

// The system-mode setup for real: codexd started by systemd as a transient service with
// Delegate=yes (what systemd/codexd.service has) puts its sessions in the unit's own subtree.
TEST(CgroupDelegation, ServiceWithDelegateYesUnderSystemdKeepsSessionsInItsSubtree) {
  if (auto why = skip_reason_without_systemd(); !why.empty()) GTEST_SKIP() << why;
  if (::getuid() != 0) GTEST_SKIP() << "starting a system service with systemd-run needs root";
  if (::access("/usr/bin/systemd-run", X_OK) != 0) GTEST_SKIP() << "/usr/bin/systemd-run is missing";
  TempDir dir("codexd-unit", TempLocation::kTmp, 0755);
  const std::string socket = dir.sub("codexd.sock"), unit = "codexd-test-" + std::to_string(::getpid()) + ".service";
  dir.make_dir("rules");
  std::ofstream(dir.sub("codexd.toml")) << "[daemon]\nmode = \"user\"\nlisten = \"unix:" << socket
                                        << "\"\n[policy]\nrules_dirs = [\"" << dir.sub("rules")
                                        << "\"]\n[sandbox]\nmode = \"danger-full-access\"\n";
  const std::string start = "/usr/bin/systemd-run --quiet --collect --unit=" + unit +
                            " -p Delegate=yes -p Type=notify -p NotifyAccess=main -- " + TestDaemon::codexd_binary() +
                            " --config " + dir.sub("codexd.toml");
  ASSERT_EQ(std::system(start.c_str()), 0) << start;
  auto channel = grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials());
  v1::GetStatusResponse status = get_status(channel);
  ASSERT_GT(status.pid(), 0);
  EXPECT_THAT(status.limits().reason(), ::testing::HasSubstr("delegated by systemd (Delegate=yes)"));
  const std::string daemon_cgroup = v2_path_of(read_text_file("/proc/" + std::to_string(status.pid()) + "/cgroup"));
  EXPECT_EQ(daemon_cgroup, "/system.slice/" + unit + "/daemon");
  auto stub = v1::Exec::NewStub(channel);
  v1::ExecCommandRequest request;
  request.set_cmd("cat /proc/self/cgroup");
  request.set_workdir(dir.path());
  request.set_yield_time_ms(10'000);
  ExecCall call = exec_command(*stub, request);
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  EXPECT_THAT(v2_path_of(call.result.output()), ::testing::StartsWith("/system.slice/" + unit + "/sessions/"));
  EXPECT_EQ(std::system(("/usr/bin/systemctl stop " + unit).c_str()), 0);
}

}  // namespace
}  // namespace codexd::testing
