// Process hardening of a running daemon, read from /proc: no core dumps (RLIMIT_CORE 0 0), no
// LD_* variables in its environment (also not in /proc/<pid>/environ, which shows the block the
// kernel got at exec), and not dumpable: its /proc files belong to root and a process of the
// same uid cannot read its memory-backed files, while it can read those of its other processes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "codexd/v1/exec.pb.h"
#include "tests/system/system_env.h"

namespace codexd::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> environ_of(pid_t pid) {
  std::vector<std::string> entries;
  std::string raw = slurp("/proc/" + std::to_string(pid) + "/environ");
  size_t start = 0;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\0') {
      if (i > start) entries.push_back(raw.substr(start, i - start));
      start = i + 1;
    }
  }
  return entries;
}

const std::vector<std::string> kLoaderEnv = {"LD_FOO=bar", "LD_BIND_NOT=1", "LD_DEBUG_OUTPUT=/nonexistent/x",
                                             "CODEXD_TEST_MARKER=kept"};

TEST(Hardening, NoCoreDumpsAndNoLoaderVariables) {
  REQUIRE_SYSTEM_ENV();
  std::string dir = make_daemon_dir();
  DaemonLaunch launch = launch_config(system_mode_config(dir));
  launch.env = kLoaderEnv;
  SystemDaemon daemon(dir, launch);
  ASSERT_TRUE(daemon.wait_ready()) << daemon.log();
  const std::string proc = "/proc/" + std::to_string(daemon.pid());

  std::string limits = slurp(proc + "/limits");
  EXPECT_TRUE(std::regex_search(limits, std::regex(R"(Max core file size\s+0\s+0\s+bytes)"))) << limits;

  auto env_entries = environ_of(daemon.pid());
  EXPECT_THAT(env_entries, ::testing::Contains(std::string("CODEXD_TEST_MARKER=kept")));  // reading works
  for (const auto& e : env_entries) EXPECT_NE(e.rfind("LD_", 0), 0u) << "/proc/<pid>/environ still has " << e;

  std::string status = slurp(proc + "/status");
  EXPECT_THAT(status, HasSubstr("TracerPid:\t0"));
  EXPECT_TRUE(std::regex_search(status, std::regex(R"(\nUid:\s+0\s+0\s+0\s+0\n)"))) << status;
}

TEST(Hardening, NotDumpableEvenForItsOwnUid) {
  REQUIRE_SYSTEM_ENV();
  // A user-mode daemon run by user a: the same uid as every other process of a.
  std::string dir = make_daemon_dir();
  std::string run = env.a.home + "/run-hardening";
  std::ostringstream config;
  config << "[daemon]\nmode = \"user\"\nlisten = \"unix:" << run << "/codexd.sock\"\n"
         << "[policy]\nrules_dirs = [\"" << dir << "/rules\"]\n"
         << "[audit]\nlog_file = \"" << env.a.home << "/audit-hardening.log\"\n";
  DaemonLaunch launch = launch_config(config.str());
  launch.as_user = &env.a;
  launch.env = kLoaderEnv;
  SystemDaemon daemon(dir, launch);
  ASSERT_TRUE(daemon.wait_ready()) << daemon.log();
  const std::string proc = "/proc/" + std::to_string(daemon.pid());

  std::string status = slurp(proc + "/status");
  ASSERT_TRUE(std::regex_search(status, std::regex("\nUid:\\s+" + std::to_string(env.a.uid) + "\\s"))) << status;
  // Not dumpable: the kernel gives its /proc files to root, not to a.
  struct stat st {};
  ASSERT_EQ(::stat((proc + "/environ").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u) << "/proc/<pid> of a dumpable process belongs to its uid";

  // a cannot read the daemon's environ or memory maps (ptrace read access is refused) ...
  auto environ_read = run_as_user(env.a, {"/bin/cat", proc + "/environ"});
  EXPECT_NE(environ_read.exit_code, 0);
  EXPECT_THAT(environ_read.err, HasSubstr("Permission denied"));
  auto maps_read = run_as_user(env.a, {"/bin/cat", proc + "/maps"});
  EXPECT_NE(maps_read.exit_code, 0) << maps_read.out.substr(0, 200);
  // ... while it reads those of its own ordinary processes (control).
  BackgroundProcess sibling(&env.a, {"/bin/sleep", "60"});
  auto sibling_read = run_as_user(env.a, {"/bin/cat", "/proc/" + std::to_string(sibling.pid()) + "/environ"});
  EXPECT_EQ(sibling_read.exit_code, 0) << sibling_read.err;
  ::kill(sibling.pid(), SIGKILL);

  // Commands it runs do not inherit the loader variables it was started with.
  v1::RunCommandRequest req;
  req.add_argv("/usr/bin/env");
  req.set_workdir(env.a_ws);
  auto listed = call_as(&env.a, run + "/codexd.sock", "RunCommand", req);
  ASSERT_TRUE(listed.ok()) << listed.raw;
  auto out = listed.response<v1::RunCommandResponse>().stdout();
  EXPECT_THAT(out, HasSubstr("CODEXD_TEST_MARKER=kept"));
  EXPECT_THAT(out, Not(HasSubstr("LD_FOO")));
  EXPECT_THAT(out, Not(HasSubstr("LD_BIND_NOT")));
  EXPECT_EQ(daemon.stop(), 0) << daemon.log();
  std::filesystem::remove_all(run);
}

}  // namespace
}  // namespace codexd::testing
