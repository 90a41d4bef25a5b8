// The shim of a durable session (docs/architecture.md "Durable sessions"): hardened
// (no_new_privs when the session is sandboxed, no core dumps), and, where the session has a
// cgroup, living in it beside the command (<leaf>/shim next to <leaf>/command), so that its
// memory and processes are the session's while a kill of the command's tree leaves the shim to
// report the exit. Also after a restart.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <sstream>
#include <string>

#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

// The parent pid from /proc/<pid>/stat (after the command name, which may hold spaces).
pid_t parent_of(pid_t pid) {
  const std::string stat = read_text_file("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(stat.substr(close + 2));
  char state = 0;
  pid_t ppid = -1;
  rest >> state >> ppid;
  return ppid;
}

// The value of a "Key:\tvalue" line of /proc/<pid>/status, "" when absent.
std::string status_field(pid_t pid, const std::string& key) {
  std::istringstream lines(read_text_file("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(key + ":", 0) == 0) return line.substr(line.find_first_not_of(" \t", key.size() + 1));
  }
  return "";
}

// /proc/<pid>/cgroup as hierarchy id -> path.
std::map<std::string, std::string> cgroups_of(pid_t pid) {
  std::map<std::string, std::string> out;
  std::istringstream lines(read_text_file("/proc/" + std::to_string(pid) + "/cgroup"));
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    out[line.substr(0, first)] = line.substr(second + 1);
  }
  return out;
}

// Whether the shim sits beside the command in every hierarchy that holds the session's group:
// the command in .../sessions/<agent>/<leaf>/command, the shim in .../<leaf>/shim.
::testing::AssertionResult ShimBesideCommand(pid_t shim, pid_t command) {
  const auto shim_groups = cgroups_of(shim);
  const auto command_groups = cgroups_of(command);
  const std::string part = "/command";
  size_t checked = 0;
  for (const auto& [hierarchy, path] : command_groups) {
    if (path.find("/sessions/") == std::string::npos) continue;
    if (path.size() < part.size() || path.compare(path.size() - part.size(), part.size(), part) != 0) {
      return ::testing::AssertionFailure() << "the command is in " << path << " (hierarchy " << hierarchy
                                           << "), not in its group's command part";
    }
    const std::string expected = path.substr(0, path.size() - part.size()) + "/shim";
    auto found = shim_groups.find(hierarchy);
    if (found == shim_groups.end() || found->second != expected) {
      return ::testing::AssertionFailure() << "hierarchy " << hierarchy << ": the shim is in "
                                           << (found == shim_groups.end() ? "?" : found->second) << ", not " << expected;
    }
    ++checked;
  }
  if (checked == 0) return ::testing::AssertionFailure() << "the command is in no session group";
  return ::testing::AssertionSuccess();
}

bool has_cgroups(const TestDaemon& daemon, std::string& why) {
  auto status = get_status(daemon.channel());
  why = status.limits().mechanism() + ": " + status.limits().reason();
  return status.limits().mechanism().rfind("cgroup", 0) == 0;
}

// The leader's pid of the only session, and its shim's.
std::pair<pid_t, pid_t> leader_and_shim(v1::Exec::Stub& stub) {
  auto sessions = list_sessions(stub);
  EXPECT_EQ(sessions.size(), 1u);
  if (sessions.size() != 1) return {-1, -1};
  const pid_t leader = sessions[0].pid();
  return {leader, parent_of(leader)};
}

// A command with a grandchild that left its process group: "grandchild=<pid>" first.
constexpr const char* kTreeWithSetsid = "setsid sleep 1000 & echo grandchild=$!; exec sleep 1000";

pid_t grandchild_of(v1::Exec::Stub& stub, const v1::ExecResult& started) {
  auto seen = follow_until_output(stub, started, "\n");
  const std::string out = started.output() + seen.output;
  const auto at = out.find("grandchild=");
  if (at == std::string::npos) return -1;
  return static_cast<pid_t>(std::stoi(out.substr(at + 11)));
}

TEST(DurableShim, ASandboxedSessionsShimHasNoNewPrivsAndNoCoreDumps) {
  TestDaemon daemon;  // workspace-write: sandboxed
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto stub = v1::Exec::NewStub(daemon.channel());
  auto started = exec_command(*stub, argv_request(daemon, {"/bin/sleep", "1000"}, 0));
  if (!started.status.ok() || !started.result.has_session_id()) {
    stub.reset();
    daemon.stop();
    GTEST_SKIP() << "no sandboxed session here: " << describe(started.status) << " " << started.result.text();
  }
  ASSERT_NE(list_sessions(*stub).at(0).sandbox(), v1::SANDBOX_NONE);
  auto [leader, shim] = leader_and_shim(*stub);
  ASSERT_GT(shim, 1);
  EXPECT_EQ(status_field(shim, "NoNewPrivs"), "1");
  EXPECT_THAT(read_text_file("/proc/" + std::to_string(shim) + "/limits"),
              ::testing::ContainsRegex("Max core file size +0 +0 "));
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

// An unsandboxed command may rightly run a set-id program (sudo): no no_new_privs for its shim.
TEST(DurableShim, AnUnsandboxedSessionsShimHasNoNoNewPrivs) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto stub = v1::Exec::NewStub(daemon.channel());
  auto started = exec_command(*stub, argv_request(daemon, {"/bin/sleep", "1000"}, 0));
  ASSERT_TRUE(started.status.ok() && started.result.has_session_id()) << describe(started.status);
  auto [leader, shim] = leader_and_shim(*stub);
  ASSERT_GT(shim, 1);
  ASSERT_NE(shim, daemon.pid());
  EXPECT_EQ(status_field(shim, "NoNewPrivs"), "0");
  EXPECT_EQ(status_field(leader, "NoNewPrivs"), "0");
  EXPECT_THAT(read_text_file("/proc/" + std::to_string(shim) + "/limits"),
              ::testing::ContainsRegex("Max core file size +0 +0 "));
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

TEST(DurableShim, TheShimLivesInItsSessionsCgroupBesideTheCommand) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  std::string why;
  if (!has_cgroups(daemon, why)) GTEST_SKIP() << "no usable cgroup: " << why;
  auto stub = v1::Exec::NewStub(daemon.channel());
  auto started = exec_command(*stub, argv_request(daemon, {"/bin/sleep", "1000"}, 0));
  ASSERT_TRUE(started.status.ok() && started.result.has_session_id()) << describe(started.status);
  auto [leader, shim] = leader_and_shim(*stub);
  ASSERT_GT(shim, 1);
  EXPECT_TRUE(ShimBesideCommand(shim, leader));
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

// Cancel reaches the whole command tree (a setsid grandchild too) and not the shim beside it,
// which reports how the command ended.
TEST(DurableShim, CancelKillsTheWholeCommandTreeAndTheShimReportsTheExit) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  std::string why;
  if (!has_cgroups(daemon, why)) GTEST_SKIP() << "no usable cgroup: " << why;
  auto stub = v1::Exec::NewStub(daemon.channel());
  auto started = exec_command(*stub, argv_request(daemon, {"/bin/sh", "-c", kTreeWithSetsid}, 250));
  ASSERT_TRUE(started.status.ok() && started.result.has_session_id()) << describe(started.status);
  const pid_t grandchild = grandchild_of(*stub, started.result);
  ASSERT_GT(grandchild, 1);
  auto [leader, shim] = leader_and_shim(*stub);
  ASSERT_TRUE(ShimBesideCommand(shim, leader));

  ASSERT_TRUE(cancel(*stub, started.result.session_id(), v1::CancelRequest::TERMINATE, 100).ok());
  auto end = follow_until_exit(*stub, started.result);
  ASSERT_TRUE(end.exited) << describe(end.status);
  // The command's own end (SIGTERM to every process of its part), as the shim saw it; a shim
  // killed with the group would have been reported as lost, without a signal.
  EXPECT_EQ(end.last.signal(), SIGTERM);
  EXPECT_EQ(end.last.exit_code(), 128 + SIGTERM);
  EXPECT_TRUE(wait_process_exit(grandchild)) << "the setsid grandchild outlived the cancel";
  EXPECT_TRUE(wait_process_exit(shim)) << "the released shim did not end";
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

// After a restart the adopted session's shim is still beside its command; a kill of the
// adopted session still takes the whole command tree and leaves the shim to report it.
TEST(DurableShim, AnAdoptedSessionsShimStaysInItsGroupAndReportsAKill) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  std::string why;
  if (!has_cgroups(daemon, why)) GTEST_SKIP() << "no usable cgroup: " << why;
  auto stub = v1::Exec::NewStub(daemon.channel());
  auto started = exec_command(*stub, argv_request(daemon, {"/bin/sh", "-c", kTreeWithSetsid}, 250));
  ASSERT_TRUE(started.status.ok() && started.result.has_session_id()) << describe(started.status);
  const int id = started.result.session_id();
  const pid_t grandchild = grandchild_of(*stub, started.result);
  ASSERT_GT(grandchild, 1);
  auto [leader, shim] = leader_and_shim(*stub);
  ASSERT_TRUE(ShimBesideCommand(shim, leader));
  stub.reset();

  EXPECT_EQ(daemon.crash(), 128 + SIGKILL);
  ASSERT_TRUE(daemon.restart()) << daemon.daemon_log();
  stub = v1::Exec::NewStub(daemon.channel());
  auto after = leader_and_shim(*stub);
  EXPECT_EQ(after.first, leader);
  EXPECT_EQ(after.second, shim);
  EXPECT_TRUE(ShimBesideCommand(shim, leader));
  EXPECT_THAT(daemon.daemon_log(), ::testing::Not(::testing::HasSubstr("without its resource group")));

  bool was_running = false;
  ASSERT_TRUE(cancel(*stub, id, v1::CancelRequest::KILL, std::nullopt, &was_running).ok());
  EXPECT_TRUE(was_running);
  EXPECT_TRUE(wait_process_exit(grandchild)) << "the setsid grandchild outlived the kill of its adopted session";
  auto end = poll(*stub, id, 10'000);
  ASSERT_TRUE(end.status.ok()) << describe(end.status);
  ASSERT_TRUE(end.result.has_exit_code()) << end.result.text();
  EXPECT_EQ(end.result.signal(), SIGKILL);
  EXPECT_EQ(end.result.exit_code(), 128 + SIGKILL);
  EXPECT_TRUE(wait_process_exit(shim)) << "the released shim did not end";
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

}  // namespace
}  // namespace codexd::testing
