// `codexd --check-config`: exit 0 on a valid config; otherwise non-zero with EVERY error as
// file:line:col. System mode refuses a config or rules file (or its directory) that anyone but
// root could change: --check-config reports it, the daemon does not start on such a config,
// and a reload with such a rules file keeps the old policy. User mode has no such rule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "codexd/v1/admin.pb.h"
#include "codexd/v1/policy.pb.h"
#include "tests/system/system_env.h"

namespace codexd::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ProcessResult check_config(const std::string& config, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {TestDaemon::codexd_binary(), "--check-config", "--config", config};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run_process(argv);
}

void write(const std::string& path, const std::string& text, mode_t mode = 0644) {
  std::ofstream(path, std::ios::trunc) << text;
  ::chmod(path.c_str(), mode);
}

bool has_line(const std::string& text, const std::string& pattern) {
  return std::regex_search(text, std::regex("(^|\\n)(codexd: )?" + pattern));
}

std::string escape(const std::string& path) { return std::regex_replace(path, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)"); }

TEST(CheckConfig, ValidConfigPasses) {
  REQUIRE_SYSTEM_ENV();
  std::string dir = make_daemon_dir();
  write(dir + "/codexd.toml", system_mode_config(dir));
  write(dir + "/rules/ok.rules", "prefix_rule(pattern = [\"git\", \"push\"], decision = \"prompt\")\n");
  auto r = check_config(dir + "/codexd.toml");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("configuration ok"));
  EXPECT_THAT(r.out, HasSubstr("rules: " + dir + "/rules/ok.rules ok"));
  EXPECT_EQ(r.err, "");
}

// A codexd copied out of its prefix finds no share/codexd/default.rules beside it: the copy
// built into it stands in (so `git reset --hard` still asks), and the check says so.
TEST(CheckConfig, AMissingDefaultRulesFileIsReplacedByTheBuiltInCopyWithAWarning) {
  REQUIRE_SYSTEM_ENV();
  std::string dir = make_daemon_dir();
  write(dir + "/codexd.toml", system_mode_config(dir));
  std::filesystem::create_directories(dir + "/bin");
  const std::string moved = dir + "/bin/codexd";
  std::filesystem::copy_file(TestDaemon::codexd_binary(), moved);
  auto r = run_process({moved, "--check-config", "--config", dir + "/codexd.toml"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("rules: <built-in default.rules> ok\n"));
  EXPECT_THAT(r.out, HasSubstr("warning: the default rules file " + dir +
                               "/share/codexd/default.rules is missing (a broken install or a binary moved out of its "
                               "prefix); the copy built into codexd is in force instead\n"));
  EXPECT_THAT(r.out, HasSubstr("configuration ok"));
  EXPECT_THAT(check_config(dir + "/codexd.toml").out, Not(HasSubstr("warning:"))) << "the build's own binary finds the file";
}

TEST(CheckConfig, EveryConfigErrorWithFileLineColumn) {
  REQUIRE_SYSTEM_ENV();
  std::string dir = make_daemon_dir();
  const std::string config = dir + "/codexd.toml";
  write(config,
        "[daemon]\n"                   // 1
        "mode = \"system\"\n"          // 2
        "bogus = 1\n"                  // 3  unknown key
        "log_level = \"loud\"\n"       // 4  bad value
        "[exec]\n"                     // 5
        "max_sessions = 1\n"           // 6  out of range
        "[sandbox]\n"                  // 7
        "writable_roots = [\"rel\"]\n" // 8  not absolute
        "[nonsense]\n"                 // 9  unknown table
        "[policy]\n"                   // 10
        "approval_policy = \"sometimes\"\n"  // 11 not an approval policy
        "[agents.\"bot\"]\n"           // 12
        "approval_policy = \"always\"\n");   // 13 not one either
  auto r = check_config(config);
  EXPECT_NE(r.exit_code, 0);
  const std::string f = escape(config);
  EXPECT_TRUE(has_line(r.err, f + R"(:3:\d+: unknown key `daemon\.bogus`)")) << r.err;
  EXPECT_TRUE(has_line(r.err, f + R"(:4:\d+: `daemon\.log_level` must be one of)")) << r.err;
  EXPECT_TRUE(has_line(r.err, f + R"(:6:\d+: `exec\.max_sessions` must be between)")) << r.err;
  EXPECT_TRUE(has_line(r.err, f + R"(:8:\d+: `sandbox\.writable_roots` must be an absolute path)")) << r.err;
  EXPECT_TRUE(has_line(r.err, f + R"(:9:\d+: unknown key `nonsense`)")) << r.err;
  const std::string valid = R"(must be one of untrusted, on-request, never, granular)";
  EXPECT_TRUE(has_line(r.err, f + R"(:11:19: `policy\.approval_policy` )" + valid + R"( \(got "sometimes"\))")) << r.err;
  EXPECT_TRUE(has_line(r.err, f + R"(:13:19: `agents\.bot\.approval_policy` )" + valid + R"( \(got "always"\))")) << r.err;

  // A TOML syntax error is reported with its position too.
  write(config, "[daemon]\nmode = \"system\"\nlisten = \n");
  auto syntax = check_config(config);
  EXPECT_NE(syntax.exit_code, 0);
  EXPECT_TRUE(has_line(syntax.err, f + R"(:3:\d+: )")) << syntax.err;
}

TEST(CheckConfig, EveryRulesErrorWithFileLineColumn) {
  REQUIRE_SYSTEM_ENV();
  std::string dir = make_daemon_dir();
  write(dir + "/codexd.toml", system_mode_config(dir));
  write(dir + "/rules/a.rules", "prefix_rule(pattern = [\"ls\"], decision = \"allow\")\n"
                                "prefix_rule(pattern = [\"rm\"], decision = \"nope\")\n");
  write(dir + "/rules/b.rules", "# comment\nprefix_rule(pattern = [\"ls\"]\n");
  write(dir + "/rules/c.rules", "prefix_rule(pattern = [\"cat\"], decision = \"allow\")\n");
  auto r = check_config(dir + "/codexd.toml");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has_line(r.err, escape(dir) + R"(/rules/a\.rules:2:\d+: )")) << r.err;
  EXPECT_TRUE(has_line(r.err, escape(dir) + R"(/rules/b\.rules:\d+:\d+: )")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("rules: " + dir + "/rules/a.rules FAILED"));
  EXPECT_THAT(r.out, HasSubstr("rules: " + dir + "/rules/b.rules FAILED"));
  EXPECT_THAT(r.out, HasSubstr("rules: " + dir + "/rules/c.rules ok"));
  EXPECT_THAT(r.out, HasSubstr("configuration has errors"));
}

TEST(SystemModeTrust, ConfigWritableByOthersIsRefused) {
  REQUIRE_SYSTEM_ENV();
  std::string dir = make_daemon_dir();
  const std::string config = dir + "/codexd.toml";
  const std::string text = system_mode_config(dir);
  write(config, text);
  ASSERT_EQ(check_config(config).exit_code, 0);

  struct Case {
    std::string what;
    std::function<void()> make_unsafe;
  };
  const std::vector<Case> cases = {
      {"owned by a user", [&] { ASSERT_EQ(::chown(config.c_str(), env.a.uid, env.a.gid), 0); }},
      {"group-writable", [&] { ::chmod(config.c_str(), 0664); }},
      {"world-writable", [&] { ::chmod(config.c_str(), 0646); }},
      {"directory world-writable", [&] { ::chmod(dir.c_str(), 0777); }},
      {"directory owned by a user", [&] { ASSERT_EQ(::chown(dir.c_str(), env.a.uid, env.a.gid), 0); }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    write(config, text, 0644);
    ASSERT_EQ(::chown(config.c_str(), 0, 0), 0);
    ASSERT_EQ(::chown(dir.c_str(), 0, 0), 0);
    ::chmod(dir.c_str(), 0755);
    c.make_unsafe();
    auto r = check_config(config);
    EXPECT_NE(r.exit_code, 0) << r.out;
    EXPECT_THAT(r.err, HasSubstr(config + ": writable by someone other than root")) << r.err;
    // The daemon itself refuses to start on it.
    SystemDaemon daemon(dir, DaemonLaunch{});  // the unsafe file as it is
    EXPECT_FALSE(daemon.wait_ready()) << "started on an untrusted config";
    EXPECT_EQ(daemon.wait_exit(), 2);
    EXPECT_THAT(daemon.log(), HasSubstr("writable by someone other than root"));
  }
  ::chmod(dir.c_str(), 0755);
  ASSERT_EQ(::chown(dir.c_str(), 0, 0), 0);

  // `--mode system` on the command line counts too; user mode has no such rule.
  std::string user_text = std::regex_replace(text, std::regex("mode = \"system\"\n"), "mode = \"user\"\n");
  write(config, user_text, 0666);
  EXPECT_EQ(check_config(config).exit_code, 0);
  EXPECT_NE(check_config(config, {"--mode", "system"}).exit_code, 0);
}

TEST(SystemModeTrust, RulesWritableByOthersAreNotLoaded) {
  REQUIRE_SYSTEM_ENV();
  std::string dir = make_daemon_dir();
  const std::string config = dir + "/codexd.toml";
  write(config, system_mode_config(dir));
  const std::string rules = dir + "/rules/10-site.rules";
  write(rules, "prefix_rule(pattern = [\"shred\"], decision = \"forbidden\")\n");
  ASSERT_EQ(check_config(config).exit_code, 0);

  ::chmod(rules.c_str(), 0666);
  auto file_case = check_config(config);
  EXPECT_EQ(file_case.exit_code, 1);
  EXPECT_THAT(file_case.err, HasSubstr(rules + ": writable by someone other than root"));
  EXPECT_THAT(file_case.out, HasSubstr("rules: " + rules + " FAILED"));
  ::chmod(rules.c_str(), 0644);

  ASSERT_EQ(::chown((dir + "/rules").c_str(), env.a.uid, env.a.gid), 0);
  auto dir_case = check_config(config);
  EXPECT_EQ(dir_case.exit_code, 1);
  EXPECT_THAT(dir_case.err, HasSubstr(dir + "/rules: writable by someone other than root")) << dir_case.err;
  ASSERT_EQ(::chown((dir + "/rules").c_str(), 0, 0), 0);

  // A running daemon: the file turns writable, SIGHUP keeps the old policy and says why.
  SystemDaemon daemon(dir, launch_config(system_mode_config(dir)));
  ASSERT_TRUE(daemon.wait_ready()) << daemon.log();
  v1::CheckPolicyRequest shred;
  shred.add_argv("shred");
  shred.add_argv("x");
  EXPECT_EQ(call_as(nullptr, socket_of(dir), "CheckPolicy", shred).response<v1::CheckPolicyResponse>().decision(),
            v1::FORBIDDEN);
  write(rules, "prefix_rule(pattern = [\"shred\"], decision = \"allow\")\n", 0666);
  ::kill(daemon.pid(), SIGHUP);
  ASSERT_TRUE(daemon.wait_notify("RELOADING=1"));
  ASSERT_TRUE(daemon.wait_notify("READY=1"));
  auto status = call_as(nullptr, socket_of(dir), "GetStatus", v1::GetStatusRequest()).response<v1::GetStatusResponse>();
  EXPECT_THAT(status.policy().last_error(), HasSubstr(rules + ": writable by someone other than root"));
  EXPECT_EQ(call_as(nullptr, socket_of(dir), "CheckPolicy", shred).response<v1::CheckPolicyResponse>().decision(),
            v1::FORBIDDEN)
      << "a rules file a user could edit must not take effect";
  EXPECT_EQ(daemon.stop(), 0);

  // User mode loads the user's own files, whatever their mode.
  write(config, std::regex_replace(system_mode_config(dir), std::regex("mode = \"system\"\n"), "mode = \"user\"\n"));
  EXPECT_EQ(check_config(config).exit_code, 0) << check_config(config).err;
}

}  // namespace
}  // namespace codexd::testing

namespace codexd::testing {
namespace {

// Fail closed: a system daemon whose rules do not load would run without the administrator's
// forbidden rules, so it does not start at all (user mode starts and reports the errors).
TEST(SystemModeTrust, BrokenRulesKeepTheSystemDaemonFromStarting) {
  REQUIRE_SYSTEM_ENV();
  std::string dir = make_daemon_dir();
  const std::string rules = dir + "/rules/10-site.rules";
  write(rules, "prefix_rule(pattern = [\"shred\"], decision = \"forbidden\",\n");  // unclosed call
  SystemDaemon daemon(dir, launch_config(system_mode_config(dir)));
  EXPECT_FALSE(daemon.wait_ready()) << "a system daemon must not serve without its rules";
  EXPECT_EQ(daemon.wait_exit(), 1);
  EXPECT_THAT(daemon.log(), HasSubstr("system mode does not start without them"));
  EXPECT_THAT(daemon.log(), HasSubstr(rules + ":"));
  EXPECT_FALSE(std::filesystem::exists(socket_of(dir)));
}

}  // namespace
}  // namespace codexd::testing
