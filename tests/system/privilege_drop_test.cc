// System mode with two real users: every command runs as the caller (uid, gid, initgroups
// groups, HOME/USER/LOGNAME), root callers map to root_runs_as, the workdir must be
// accessible to the caller, a caller never gets more privilege than it has, and the sandbox
// still applies after the drop. Every call is made by a real process of that user.
#include <gmock/gmock.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <regex>
#include <sstream>

#include "codexd/v1/exec.pb.h"
#include "codexd/v1/sandbox.pb.h"
#include "tests/system/system_env.h"

namespace codexd::testing {
namespace {

using ::testing::HasSubstr;

constexpr int kPermissionDenied = 7;
constexpr int kInvalidArgument = 3;

// Prints uid, gid, groups, HOME, USER, LOGNAME, one per line.
const char* kWhoAmI = "id -u; id -g; id -G; echo \"$HOME\"; echo \"$USER\"; echo \"$LOGNAME\"";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

std::set<std::string> words(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  std::string w;
  while (in >> w) out.insert(w);
  return out;
}

v1::RunCommandRequest run_request(const std::vector<std::string>& argv, const std::string& workdir) {
  v1::RunCommandRequest req;
  for (const auto& a : argv) req.add_argv(a);
  req.set_workdir(workdir);
  req.set_timeout_ms(30000);
  return req;
}

v1::SandboxRunRequest sandbox_request(const std::vector<std::string>& argv, const std::string& workdir) {
  v1::SandboxRunRequest req;
  for (const auto& a : argv) req.add_argv(a);
  req.set_workdir(workdir);
  req.set_timeout_ms(30000);
  return req;
}

// What `kWhoAmI` must print for `user`. Inside bwrap's user namespace only the uid and gid are
// mapped: supplementary groups still apply (the kernel checks them) but read back as the
// overflow gid, so there the groups may only be the user's own or that one.
void expect_identity(const std::string& output, const TestUser& user, const std::string& where, bool sandboxed) {
  auto lines = lines_of(output);
  ASSERT_EQ(lines.size(), 6u) << where << ": " << output;
  EXPECT_EQ(lines[0], std::to_string(user.uid)) << where;
  EXPECT_EQ(lines[1], std::to_string(user.gid)) << where;
  std::set<std::string> expected_groups;
  for (gid_t g : user.groups) expected_groups.insert(std::to_string(g));
  auto groups = words(lines[2]);
  if (sandboxed) {
    std::ifstream overflow_file("/proc/sys/kernel/overflowgid");
    std::string overflow;
    overflow_file >> overflow;
    EXPECT_TRUE(groups.count(std::to_string(user.gid))) << where << ": id -G " << lines[2];
    for (const auto& g : groups) EXPECT_TRUE(expected_groups.count(g) || g == overflow) << where << ": foreign group " << g;
  } else {
    EXPECT_EQ(groups, expected_groups) << where << ": id -G";
  }
  EXPECT_EQ(lines[3], user.home) << where << ": HOME";
  EXPECT_EQ(lines[4], user.name) << where << ": USER";
  EXPECT_EQ(lines[5], user.name) << where << ": LOGNAME";
}

class PrivilegeDrop : public ::testing::Test {
 protected:
  // A system-mode daemon on a temp socket (0660, group = the users' socket group).
  std::unique_ptr<SystemDaemon> start(const std::string& daemon_extra = "", const std::string& sandbox_mode = "workspace-write") {
    dir_ = make_daemon_dir();
    std::string config = system_mode_config(dir_, daemon_extra);
    config = std::regex_replace(config, std::regex("mode = \"workspace-write\""), "mode = \"" + sandbox_mode + "\"");
    auto daemon = std::make_unique<SystemDaemon>(dir_, launch_config(config));
    if (!daemon->wait_ready()) ADD_FAILURE() << "daemon did not become ready:\n" << daemon->log();
    return daemon;
  }
  std::string socket() const { return socket_of(dir_); }
  std::string dir_;
};

TEST_F(PrivilegeDrop, SocketIsGroupOnlyLikeProduction) {
  REQUIRE_SYSTEM_ENV();
  auto daemon = start();
  struct stat st {};
  ASSERT_EQ(::stat(socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_gid, ::getgrnam(env.socket_group.c_str())->gr_gid);
  ASSERT_EQ(::stat((dir_ + "/run").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  // A uid outside the group cannot even connect.
  auto nobody = run_process({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", rpc_client_binary(),
                             socket(), "GetStatus", "{}"});
  auto outcome = parse_rpc_output(nobody);
  EXPECT_EQ(outcome.code, 14) << outcome.raw;  // UNAVAILABLE: connect() refused with EACCES
}

// A file only members of the extra group (user a, not b) may read.
std::string group_only_file(const SystemEnv& env) {
  std::string dir = env.root->path() + "/group-only";
  std::filesystem::create_directories(dir);
  ::chmod(dir.c_str(), 0755);
  std::string file = dir + "/secret";
  std::ofstream(file) << "group-secret\n";
  if (::chown(file.c_str(), 0, ::getgrnam(env.extra_group.c_str())->gr_gid) != 0) return "";
  ::chmod(file.c_str(), 0640);
  return file;
}

TEST_F(PrivilegeDrop, CommandsRunAsTheCallerWithItsGroupsAndEnvironment) {
  REQUIRE_SYSTEM_ENV();
  // User a has a supplementary group b lacks: initgroups really happened.
  gid_t extra = ::getgrnam(env.extra_group.c_str())->gr_gid;
  ASSERT_NE(std::find(env.a.groups.begin(), env.a.groups.end(), extra), env.a.groups.end());
  const std::string secret = group_only_file(env);
  ASSERT_FALSE(secret.empty());
  for (const std::string mode : {"workspace-write", "danger-full-access"}) {
    SCOPED_TRACE(mode);
    const bool sandboxed = mode != "danger-full-access";
    auto daemon = start("", mode);
    for (const auto& [user, ws] : {std::pair{&env.a, env.a_ws}, std::pair{&env.b, env.b_ws}}) {
      auto run = call_as(user, socket(), "RunCommand", run_request({"/bin/sh", "-c", kWhoAmI}, ws));
      ASSERT_TRUE(run.ok()) << run.raw;
      auto r = run.response<v1::RunCommandResponse>();
      ASSERT_EQ(r.exit_code(), 0) << r.stderr() << r.rejection().message();
      EXPECT_EQ(r.sandbox() != v1::SANDBOX_NONE, sandboxed);
      expect_identity(r.stdout(), *user, "RunCommand as " + user->name, sandboxed);

      v1::ExecCommandRequest exec;
      exec.add_argv("/bin/sh");
      exec.add_argv("-c");
      exec.add_argv(kWhoAmI);
      exec.set_workdir(ws);
      exec.set_yield_time_ms(10000);
      auto unified = call_as(user, socket(), "ExecCommand", exec);
      ASSERT_TRUE(unified.ok()) << unified.raw;
      auto u = unified.response<v1::ExecResult>();
      ASSERT_TRUE(u.has_exit_code()) << unified.raw;
      EXPECT_EQ(u.exit_code(), 0);
      expect_identity(u.output(), *user, "ExecCommand as " + user->name, sandboxed);

      // The supplementary group grants what it grants outside: a reads, b does not.
      auto read = call_as(user, socket(), "RunCommand", run_request({"/bin/cat", secret}, ws));
      ASSERT_TRUE(read.ok()) << read.raw;
      auto rr = read.response<v1::RunCommandResponse>();
      if (user == &env.a) {
        EXPECT_EQ(rr.stdout(), "group-secret\n") << rr.stderr();
      } else {
        EXPECT_NE(rr.exit_code(), 0);
        EXPECT_THAT(rr.stderr(), HasSubstr("Permission denied"));
      }
    }
  }
}

TEST_F(PrivilegeDrop, RootCallersRunAsRootRunsAsWhenConfigured) {
  REQUIRE_SYSTEM_ENV();
  {
    auto daemon = start("root_runs_as = \"" + env.b.name + "\"");
    auto run = call_as(nullptr, socket(), "RunCommand", run_request({"/bin/sh", "-c", kWhoAmI}, env.b_ws));
    ASSERT_TRUE(run.ok()) << run.raw;
    auto r = run.response<v1::RunCommandResponse>();
    ASSERT_EQ(r.exit_code(), 0) << r.stderr();
    expect_identity(r.stdout(), env.b, "root mapped to root_runs_as", true);
    // The sandbox-only path (admins only) maps the same way.
    auto sandboxed = call_as(nullptr, socket(), "RunSandboxed", sandbox_request({"/bin/sh", "-c", kWhoAmI}, env.b_ws));
    ASSERT_TRUE(sandboxed.ok()) << sandboxed.raw;
    auto s = sandboxed.response<v1::RunCommandResponse>();
    ASSERT_EQ(s.exit_code(), 0) << s.stderr() << s.rejection().message();
    expect_identity(s.stdout(), env.b, "RunSandboxed by root mapped to root_runs_as", true);
    // The mapped account's own limits apply: a's 0700 home is closed to it.
    auto denied = call_as(nullptr, socket(), "RunCommand", run_request({"/bin/true"}, env.a_ws));
    EXPECT_EQ(denied.code, kPermissionDenied) << denied.raw;
  }
  {  // Control: without root_runs_as a root caller stays root.
    auto daemon = start();
    std::string ws = dir_ + "/root-ws";
    std::filesystem::create_directories(ws);
    auto run = call_as(nullptr, socket(), "RunCommand", run_request({"/bin/sh", "-c", "id -u"}, ws));
    ASSERT_TRUE(run.ok()) << run.raw;
    auto r = run.response<v1::RunCommandResponse>();
    EXPECT_EQ(r.stdout(), "0\n") << run.raw;
  }
}

TEST_F(PrivilegeDrop, WorkdirMustBeAccessibleToTheCaller) {
  REQUIRE_SYSTEM_ENV();
  auto daemon = start();
  // b's home is 0700: a cannot enter b's workspace under it, by any path into the daemon.
  auto run = call_as(&env.a, socket(), "RunCommand", run_request({"/bin/true"}, env.b_ws));
  EXPECT_EQ(run.code, kPermissionDenied) << run.raw;
  EXPECT_THAT(run.message, HasSubstr("not accessible to uid " + std::to_string(env.a.uid)));

  v1::ExecCommandRequest exec;
  exec.add_argv("/bin/true");
  exec.set_workdir(env.b_ws);
  auto unified = call_as(&env.a, socket(), "ExecCommand", exec);
  EXPECT_EQ(unified.code, kPermissionDenied) << unified.raw;

  // The sandbox-only debugging call is for admins at all (root, daemon.admin_uids).
  auto sandboxed = call_as(&env.a, socket(), "RunSandboxed", sandbox_request({"/bin/true"}, env.a_ws));
  EXPECT_EQ(sandboxed.code, kPermissionDenied) << sandboxed.raw;
  EXPECT_THAT(sandboxed.message, HasSubstr("admin uid"));

  auto missing = call_as(&env.a, socket(), "RunCommand", run_request({"/bin/true"}, env.a_ws + "/does-not-exist"));
  EXPECT_EQ(missing.code, kInvalidArgument) << missing.raw;

  // Control: b itself may.
  auto own = call_as(&env.b, socket(), "RunCommand", run_request({"/bin/true"}, env.b_ws));
  ASSERT_TRUE(own.ok()) << own.raw;
  EXPECT_EQ(own.response<v1::RunCommandResponse>().exit_code(), 0);
}

TEST_F(PrivilegeDrop, CallerNeverGainsPrivilege) {
  REQUIRE_SYSTEM_ENV();
  // A setuid-root `id`, reachable by everybody.
  std::string bin = env.root->path() + "/suid-bin";
  std::filesystem::create_directories(bin);
  ::chmod(bin.c_str(), 0755);
  std::string suid_id = bin + "/id";
  std::filesystem::copy_file("/usr/bin/id", suid_id, std::filesystem::copy_options::overwrite_existing);
  ASSERT_EQ(::chown(suid_id.c_str(), 0, 0), 0);
  ASSERT_EQ(::chmod(suid_id.c_str(), 04755), 0);
  // Control: outside codexd the bit works (else this test could not fail).
  auto direct = run_as_user(env.a, {suid_id, "-u"});
  if (direct.out != "0\n") GTEST_SKIP() << "setuid binaries do not work under " << bin << " (nosuid mount?): " << direct.out;

  auto daemon = start("root_runs_as = \"" + env.a.name + "\"");
  auto run = call_as(&env.a, socket(), "RunCommand", run_request({suid_id, "-u"}, env.a_ws));
  ASSERT_TRUE(run.ok()) << run.raw;
  auto r = run.response<v1::RunCommandResponse>();
  EXPECT_EQ(r.stdout(), std::to_string(env.a.uid) + "\n") << "setuid escalated inside codexd: " << r.stderr();

  // No capabilities in any set, and no_new_privs, for the command and the sandbox-only path.
  const char* caps = "grep -E '^(CapInh|CapPrm|CapEff|CapAmb|NoNewPrivs):' /proc/self/status";
  for (const char* method : {"RunCommand", "RunSandboxed"}) {
    // RunSandboxed is admin-only: root calls it, mapped to a by root_runs_as.
    RpcOutcome status = std::string(method) == "RunCommand"
                            ? call_as(&env.a, socket(), method, run_request({"/bin/sh", "-c", caps}, env.a_ws))
                            : call_as(nullptr, socket(), method, sandbox_request({"/bin/sh", "-c", caps}, env.a_ws));
    ASSERT_TRUE(status.ok()) << status.raw;
    auto out = status.response<v1::RunCommandResponse>().stdout();
    EXPECT_THAT(out, HasSubstr("CapInh:\t0000000000000000")) << method;
    EXPECT_THAT(out, HasSubstr("CapPrm:\t0000000000000000")) << method;
    EXPECT_THAT(out, HasSubstr("CapEff:\t0000000000000000")) << method;
    EXPECT_THAT(out, HasSubstr("CapAmb:\t0000000000000000")) << method;
    EXPECT_THAT(out, HasSubstr("NoNewPrivs:\t1")) << method;
  }
  std::filesystem::remove_all(bin);
}

TEST_F(PrivilegeDrop, SandboxStillAppliesToDroppedUsers) {
  REQUIRE_SYSTEM_ENV();
  // a may write here on its own (control below), but it is outside the workspace.
  std::string outside = env.a.home + "/outside";
  std::filesystem::create_directories(outside);
  ASSERT_EQ(::chown(outside.c_str(), env.a.uid, env.a.gid), 0);
  auto control = run_as_user(env.a, {"/bin/sh", "-c", "echo x > " + outside + "/direct && echo wrote"});
  ASSERT_EQ(control.out, "wrote\n") << control.err;

  auto daemon = start();
  auto escape = call_as(&env.a, socket(), "RunCommand",
                        run_request({"/bin/sh", "-c", "echo x > " + outside + "/sandboxed"}, env.a_ws));
  ASSERT_TRUE(escape.ok()) << escape.raw;
  auto e = escape.response<v1::RunCommandResponse>();
  EXPECT_NE(e.exit_code(), 0);
  EXPECT_THAT(e.stderr(), HasSubstr("Read-only file system"));
  EXPECT_FALSE(std::filesystem::exists(outside + "/sandboxed"));

  auto inside = call_as(&env.a, socket(), "RunCommand", run_request({"/bin/sh", "-c", "echo x > made-here"}, env.a_ws));
  ASSERT_TRUE(inside.ok()) << inside.raw;
  EXPECT_EQ(inside.response<v1::RunCommandResponse>().exit_code(), 0) << inside.response<v1::RunCommandResponse>().stderr();
  struct stat st {};
  ASSERT_EQ(::stat((env.a_ws + "/made-here").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, env.a.uid);
  EXPECT_EQ(st.st_gid, env.a.gid);
  ::unlink((env.a_ws + "/made-here").c_str());
}

}  // namespace
}  // namespace codexd::testing
