// systemd integration without systemd: a listening socket handed over exactly like systemd
// does (fd 3, LISTEN_FDS=1, LISTEN_PID = the daemon's pid, set in the child after fork), and
// the sd_notify protocol on NOTIFY_SOCKET: READY=1 + STATUS=, RELOADING=1 then READY=1 on
// SIGHUP, STOPPING=1 on SIGTERM. A reload with a broken rules file keeps the old policy and
// reports the error with file:line:col.
#include <gmock/gmock.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>

#include "codexd/v1/admin.pb.h"
#include "codexd/v1/exec.pb.h"
#include "codexd/v1/policy.pb.h"
#include "tests/system/system_env.h"

namespace codexd::testing {
namespace {

using ::testing::HasSubstr;

// What codexd.socket does: /run/codexd (0750 root:codexd), the socket 0660 root:codexd.
int systemd_style_socket(const std::string& path, gid_t group) {
  std::string dir = path.substr(0, path.rfind('/'));
  std::filesystem::create_directories(dir);
  ::chmod(dir.c_str(), 0750);
  if (::chown(dir.c_str(), 0, group) != 0) return -1;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0) {
    ::close(fd);
    return -1;
  }
  ::chmod(path.c_str(), 0660);
  if (::chown(path.c_str(), 0, group) != 0) return -1;
  return fd;
}

v1::RunCommandRequest id_request(const std::string& workdir) {
  v1::RunCommandRequest req;
  req.add_argv("/bin/sh");
  req.add_argv("-c");
  req.add_argv("id -u; env");
  req.set_workdir(workdir);
  return req;
}

TEST(SocketActivation, ServesOnThePassedSocketAndLeavesItInPlace) {
  REQUIRE_SYSTEM_ENV();
  std::string dir = make_daemon_dir();
  const std::string path = socket_of(dir);
  gid_t group = ::getgrnam(env.socket_group.c_str())->gr_gid;
  int fd = systemd_style_socket(path, group);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);

  DaemonLaunch launch = launch_config(system_mode_config(dir));
  launch.listen_fd = fd;
  SystemDaemon daemon(dir, launch);
  auto ready = daemon.wait_notify("READY=1");
  ::close(fd);  // systemd keeps its copy; ours is no longer needed
  ASSERT_TRUE(ready) << daemon.log();
  EXPECT_THAT(*ready, HasSubstr("STATUS=listening on " + path));
  EXPECT_THAT(daemon.log(), HasSubstr("using the listening socket passed by systemd (fd 3)"));

  // A real user reaches it through the group, and runs as itself.
  auto run = call_as(&env.a, path, "RunCommand", id_request(env.a_ws));
  ASSERT_TRUE(run.ok()) << run.raw << daemon.log();
  auto out = run.response<v1::RunCommandResponse>().stdout();
  EXPECT_EQ(out.substr(0, out.find('\n')), std::to_string(env.a.uid));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("LISTEN_")));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("NOTIFY_SOCKET")));

  // The daemon did not replace or re-mode the socket ...
  struct stat during {};
  ASSERT_EQ(::stat(path.c_str(), &during), 0);
  EXPECT_EQ(during.st_ino, before.st_ino);
  EXPECT_EQ(during.st_mode & 07777, 0660u);
  EXPECT_EQ(during.st_gid, group);

  // ... says STOPPING=1 on SIGTERM, exits 0, and leaves the socket file to its owner.
  EXPECT_EQ(daemon.stop(), 0) << daemon.log();
  EXPECT_TRUE(daemon.wait_notify("STOPPING=1", std::chrono::seconds(1))) << "notifications: " << daemon.notifications().size();
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0) << "the daemon unlinked a socket it does not own";
  EXPECT_TRUE(S_ISSOCK(after.st_mode));
  EXPECT_EQ(after.st_ino, before.st_ino);
}

TEST(SocketActivation, IgnoresASocketMeantForAnotherProcess) {
  REQUIRE_SYSTEM_ENV();
  std::string dir = make_daemon_dir();
  gid_t group = ::getgrnam(env.socket_group.c_str())->gr_gid;
  const std::string passed = dir + "/other/passed.sock";
  int fd = systemd_style_socket(passed, group);
  ASSERT_GE(fd, 0);
  DaemonLaunch launch = launch_config(system_mode_config(dir));
  launch.listen_fd = fd;
  launch.foreign_listen_pid = true;  // LISTEN_PID is not the daemon: sd_listen_fds() says 0
  SystemDaemon daemon(dir, launch);
  ASSERT_TRUE(daemon.wait_ready()) << daemon.log();
  ::close(fd);
  EXPECT_THAT(daemon.log(), ::testing::Not(HasSubstr("passed by systemd")));
  // It made its own socket at the configured path, the production way.
  struct stat st {};
  ASSERT_EQ(::stat(socket_of(dir).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  auto status = call_as(&env.b, socket_of(dir), "GetStatus", v1::GetStatusRequest());
  ASSERT_TRUE(status.ok()) << status.raw;
  EXPECT_EQ(status.response<v1::GetStatusResponse>().caller_uid(), env.b.uid);
  EXPECT_EQ(daemon.stop(), 0);
  EXPECT_FALSE(std::filesystem::exists(socket_of(dir))) << "its own socket is removed on exit";
  EXPECT_TRUE(std::filesystem::exists(passed));
}

TEST(SocketActivation, ReportsAndHidesThePassedSocketWhereverItIs) {
  REQUIRE_SYSTEM_ENV();
  // The socket unit listens somewhere else than daemon.listen says (an edited unit, or
  // systemd-socket-activate by hand): the daemon must still hide the real one from commands.
  std::string dir = make_daemon_dir();
  gid_t group = ::getgrnam(env.socket_group.c_str())->gr_gid;
  const std::string passed = dir + "/elsewhere/codexd.sock";
  int fd = systemd_style_socket(passed, group);
  ASSERT_GE(fd, 0);
  ::chmod((dir + "/elsewhere").c_str(), 0755);  // visible to everyone unless masked
  DaemonLaunch launch = launch_config(system_mode_config(dir));
  launch.listen_fd = fd;
  SystemDaemon daemon(dir, launch);
  ASSERT_TRUE(daemon.wait_ready()) << daemon.log();
  ::close(fd);
  auto status = call_as(&env.a, passed, "GetStatus", v1::GetStatusRequest());
  ASSERT_TRUE(status.ok()) << status.raw;
  EXPECT_EQ(status.response<v1::GetStatusResponse>().socket_path(), passed);
  // Outside the sandbox a sees the socket (control); inside it does not.
  EXPECT_EQ(run_as_user(env.a, {"/usr/bin/test", "-S", passed}).exit_code, 0);
  v1::RunCommandRequest probe;
  probe.add_argv("/bin/sh");
  probe.add_argv("-c");
  probe.add_argv("test -S " + passed + " && echo visible || echo hidden");
  probe.set_workdir(env.a_ws);
  auto run = call_as(&env.a, passed, "RunCommand", probe);
  ASSERT_TRUE(run.ok()) << run.raw;
  EXPECT_EQ(run.response<v1::RunCommandResponse>().stdout(), "hidden\n");
  EXPECT_EQ(daemon.stop(), 0);
  EXPECT_TRUE(std::filesystem::exists(passed));
}

v1::CheckPolicyResponse check(const std::string& socket, const std::string& program) {
  v1::CheckPolicyRequest req;
  req.add_argv(program);
  req.add_argv("x");
  auto r = call_as(nullptr, socket, "CheckPolicy", req);
  EXPECT_TRUE(r.ok()) << r.raw;
  return r.response<v1::CheckPolicyResponse>();
}

v1::GetStatusResponse status_of(const std::string& socket) {
  auto r = call_as(nullptr, socket, "GetStatus", v1::GetStatusRequest());
  EXPECT_TRUE(r.ok()) << r.raw;
  return r.response<v1::GetStatusResponse>();
}

TEST(Notify, SighupReloadsAndABrokenRulesFileKeepsTheOldPolicy) {
  REQUIRE_SYSTEM_ENV();
  std::string dir = make_daemon_dir();
  std::ofstream(dir + "/rules/10-base.rules") << "prefix_rule(pattern = [\"shred\"], decision = \"forbidden\")\n";
  SystemDaemon daemon(dir, launch_config(system_mode_config(dir)));
  auto ready = daemon.wait_notify("READY=1");
  ASSERT_TRUE(ready) << daemon.log();
  EXPECT_THAT(*ready, HasSubstr("STATUS="));
  const std::string socket = socket_of(dir);
  EXPECT_EQ(check(socket, "shred").decision(), v1::FORBIDDEN);
  const auto rules_before = status_of(socket).policy().rule_count();

  // A good reload: RELOADING=1, then READY=1, and the new rule is in force.
  std::ofstream(dir + "/rules/20-more.rules") << "prefix_rule(pattern = [\"wipe\"], decision = \"forbidden\")\n";
  ::kill(daemon.pid(), SIGHUP);
  ASSERT_TRUE(daemon.wait_notify("RELOADING=1")) << daemon.log();
  ASSERT_TRUE(daemon.wait_notify("READY=1")) << daemon.log();
  EXPECT_EQ(check(socket, "wipe").decision(), v1::FORBIDDEN);
  auto good = status_of(socket);
  EXPECT_EQ(good.policy().rule_count(), rules_before + 1);
  EXPECT_EQ(good.policy().last_error(), "");

  // A broken file: the reload fails as a whole, the previous policy stays in force.
  std::ofstream(dir + "/rules/30-broken.rules") << "# broken on purpose\n"
                                                << "prefix_rule(\n"
                                                << "    pattern = [\"ls\"],\n"
                                                << "    decision = \"forbidden\"\n"
                                                << "    justification = \"missing comma above\",\n"
                                                << ")\n";
  std::ofstream(dir + "/rules/20-more.rules", std::ios::trunc) << "";  // would drop `wipe`
  ::kill(daemon.pid(), SIGHUP);
  ASSERT_TRUE(daemon.wait_notify("RELOADING=1")) << daemon.log();
  ASSERT_TRUE(daemon.wait_notify("READY=1")) << daemon.log();
  auto broken = status_of(socket);
  EXPECT_TRUE(std::regex_search(broken.policy().last_error(), std::regex(dir + R"(/rules/30-broken\.rules:\d+:\d+: )")))
      << broken.policy().last_error();
  EXPECT_EQ(broken.policy().rule_count(), good.policy().rule_count());
  bool reported = false;
  for (const auto& f : broken.policy().files()) {
    if (f.path() == dir + "/rules/30-broken.rules") {
      reported = true;
      EXPECT_FALSE(f.loaded());
      EXPECT_TRUE(std::regex_search(f.error(), std::regex(R"(30-broken\.rules:\d+:\d+: )"))) << f.error();
    }
  }
  EXPECT_TRUE(reported);
  EXPECT_EQ(check(socket, "wipe").decision(), v1::FORBIDDEN) << "the old policy must stay in force";
  EXPECT_NE(check(socket, "ls").decision(), v1::FORBIDDEN);
  EXPECT_THAT(daemon.log(), HasSubstr("keeping the previous policy"));

  // Fixed: the next SIGHUP loads everything, the error is gone.
  std::ofstream(dir + "/rules/30-broken.rules", std::ios::trunc) << "prefix_rule(pattern = [\"ls\"], decision = \"forbidden\")\n";
  ::kill(daemon.pid(), SIGHUP);
  ASSERT_TRUE(daemon.wait_notify("RELOADING=1"));
  ASSERT_TRUE(daemon.wait_notify("READY=1"));
  auto fixed = status_of(socket);
  EXPECT_EQ(fixed.policy().last_error(), "");
  EXPECT_EQ(check(socket, "ls").decision(), v1::FORBIDDEN);
  EXPECT_NE(check(socket, "wipe").decision(), v1::FORBIDDEN);

  EXPECT_EQ(daemon.stop(), 0);
  EXPECT_TRUE(daemon.wait_notify("STOPPING=1", std::chrono::seconds(1)));
}

}  // namespace
}  // namespace codexd::testing
