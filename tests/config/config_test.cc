#include "daemon/config/config.h"

#include "daemon/config/byte_size.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

namespace codexd::config {
namespace {

using testing::HasSubstr;

TEST(Config, EmptyFileGivesTheUserModeDefaults) {
  auto c = parse_config("", "c.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->daemon.mode, DaemonMode::kUser);
  EXPECT_EQ(c->exec.default_shell, "/bin/bash");
  EXPECT_TRUE(c->exec.allow_login_shell);
  EXPECT_EQ(c->exec.max_sessions, 64u);
  EXPECT_EQ(c->exec.background_terminal_max_timeout_ms, 300000u);
  EXPECT_EQ(c->policy.approval_policy, policy::ApprovalPolicyKind::kOnRequest);
  EXPECT_EQ(c->sandbox.policy.mode, sandbox::SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(c->sandbox.policy.network, sandbox::NetworkMode::kOff);
  EXPECT_FALSE(c->environment.ignore_default_excludes);  // secrets filtered by default
  EXPECT_EQ(c->approvals.timeout_ms, 0u);
  EXPECT_FALSE(c->approvals.reject_without_reviewer);
  EXPECT_TRUE(c->policy.include_default_rules);
}

TEST(Config, SystemModeChangesTheDefaults) {
  auto c = parse_config("[daemon]\nmode = \"system\"\n", "c.toml");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(socket_path(*c), "/run/codexd/codexd.sock");
  EXPECT_EQ(c->policy.rules_dirs, std::vector<std::string>{"/etc/codexd/rules"});
  EXPECT_EQ(c->policy.amend_file, "");
}

TEST(Config, EveryKeyIsRead) {
  auto c = parse_config(R"(
[daemon]
listen = "unix:/run/x.sock"
log_level = "debug"
log_format = "json"
admin_uids = [1000, 1001]
socket_mode = "0660"
socket_dir_mode = "0750"
root_runs_as = "nobody"
[exec]
default_shell = "/bin/sh"
allow_login_shell = false
max_sessions = 10
background_terminal_max_timeout_ms = 60000
[environment]
inherit = "core"
ignore_default_excludes = true
exclude = ["AWS_*"]
include_only = ["PATH", "HOME"]
set = { FOO = "bar" }
[policy]
rules_dirs = ["/etc/r"]
approval_policy = "untrusted"
include_default_rules = false
[sandbox]
mode = "read-only"
writable_roots = ["/srv/w"]
network_access = true
denied_read = ["/root/.ssh"]
backend = "landlock"
[approvals]
timeout_ms = 5000
when_no_reviewer = "reject"
reviewer_uids = [0]
[agents."ci-bot"]
approval_policy = "never"
[audit]
log_file = "/var/log/codexd-audit.log"
)",
                        "c.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(socket_path(*c), "/run/x.sock");
  EXPECT_EQ(c->daemon.admin_uids, (std::vector<uid_t>{1000, 1001}));
  EXPECT_EQ(c->daemon.socket_mode, 0660u);
  EXPECT_EQ(c->daemon.socket_dir_mode, 0750u);
  EXPECT_EQ(c->exec.max_sessions, 10u);
  EXPECT_EQ(c->environment.inherit, exec::EnvironmentPolicy::Inherit::kCore);
  EXPECT_EQ(c->environment.set.at("FOO"), "bar");
  EXPECT_FALSE(c->policy.include_default_rules);
  EXPECT_EQ(c->sandbox.policy.mode, sandbox::SandboxMode::kReadOnly);
  EXPECT_EQ(c->sandbox.backend, sandbox::BackendPreference::kLandlock);
  EXPECT_TRUE(c->approvals.reject_without_reviewer);
  EXPECT_EQ(c->agents.at("ci-bot").approval_policy, policy::ApprovalPolicyKind::kNever);
  EXPECT_EQ(c->policy.approval_policy, policy::ApprovalPolicyKind::kUntrusted);
  EXPECT_EQ(c->audit.log_file, "/var/log/codexd-audit.log");
}

// toml++ 3.3.0 reached __builtin_unreachable() asking whether these characters are whitespace
// (fuzz_config_load found it; daemon/config/config.cc says how it is answered now).
TEST(Config, NonAsciiCharactersWhereWhitespaceMayBeAreNotUndefinedBehaviour) {
  auto stray = parse_config("\xcc\xaa", "c.toml");  // U+032A where a key may start
  ASSERT_FALSE(stray.ok());
  EXPECT_THAT(stray.status().message(), HasSubstr("c.toml:1:1: "));
  // U+00A7 first after a line-ending backslash in a multi-line string: part of the string.
  auto in_string = parse_config("[environment]\nset = { A = \"\"\"\\\n\xc2\xa7x\"\"\" }\n", "c.toml");
  ASSERT_TRUE(in_string.ok()) << in_string.status().message();
  EXPECT_EQ(in_string->environment.set.at("A"), "\xc2\xa7x");
  auto fuzzed = parse_config("a = [1, 2.5, \"x\", {b \xc8\xa4t]]\n\"k\\u00e\xcc~\xdd\xdf\xc2 \"\"\"multi\nline\"\xc1\"\n", "c.toml");
  EXPECT_FALSE(fuzzed.ok());
}

TEST(Config, UnknownKeysAreErrorsWithTheirPosition) {
  auto c = parse_config("[exec]\nmax_session = 3\n\n[sandbox]\nnetwrk = true\n[nope]\n", "/etc/codexd/codexd.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  // Every error, not just the first.
  EXPECT_THAT(c.status().message(), HasSubstr("/etc/codexd/codexd.toml:2:15: unknown key `exec.max_session`"));
  EXPECT_THAT(c.status().message(), HasSubstr("/etc/codexd/codexd.toml:5:10: unknown key `sandbox.netwrk`"));
  EXPECT_THAT(c.status().message(), HasSubstr("unknown key `nope`"));
}

TEST(Config, BadValuesSayWhatIsAllowed) {
  auto c = parse_config(R"([exec]
max_sessions = 3
allow_login_shell = "yes"
[policy]
approval_policy = "sometimes"
[sandbox]
writable_roots = ["relative/dir"]
[daemon]
socket_mode = "rw-rw----"
listen = "unix:relative.sock"
)",
                        "c.toml");
  ASSERT_FALSE(c.ok());
  const std::string& m = c.status().message();
  EXPECT_THAT(m, HasSubstr("c.toml:2:16: `exec.max_sessions` must be between 9 and 4096 (got 3)"));
  EXPECT_THAT(m, HasSubstr("c.toml:3:21: `exec.allow_login_shell` must be true or false"));
  EXPECT_THAT(m, HasSubstr("`policy.approval_policy` must be one of untrusted, on-request, never, granular (got \"sometimes\")"));
  EXPECT_THAT(m, HasSubstr("`sandbox.writable_roots` must be an absolute path (got \"relative/dir\")"));
  EXPECT_THAT(m, HasSubstr("`daemon.socket_mode` must be an octal mode"));
  EXPECT_THAT(m, HasSubstr("`daemon.listen` must be unix:/absolute/path"));
  // Reported in file order.
  EXPECT_LT(m.find("c.toml:2:"), m.find("c.toml:3:"));
  EXPECT_LT(m.find("c.toml:7:"), m.find("c.toml:9:"));
}

// The acceptor's preface gate (daemon/server/preface_gate.h).
TEST(Config, ThePrefaceGateKeysHaveDefaultsAndRanges) {
  auto defaults = parse_config("", "c.toml");
  ASSERT_TRUE(defaults.ok()) << defaults.status().message();
  EXPECT_EQ(defaults->daemon.preface_timeout_ms, 5000u);
  EXPECT_EQ(defaults->daemon.waiting_connections_per_uid, 64u);
  auto set = parse_config("[daemon]\npreface_timeout_ms = 300\nwaiting_connections_per_uid = 8\n", "c.toml");
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->daemon.preface_timeout_ms, 300u);
  EXPECT_EQ(set->daemon.waiting_connections_per_uid, 8u);
  EXPECT_EQ(defaults->daemon.max_connections_per_uid, 128u);
  auto capped = parse_config("[daemon]\nmax_connections_per_uid = 3\n", "c.toml");
  ASSERT_TRUE(capped.ok()) << capped.status().message();
  EXPECT_EQ(capped->daemon.max_connections_per_uid, 3u);
  auto zero = parse_config("[daemon]\nmax_connections_per_uid = 0\n", "c.toml");
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.status().message(), HasSubstr("c.toml:2:27: `daemon.max_connections_per_uid` must be between 1 and 4096 (got 0)"));
  auto bad = parse_config("[daemon]\npreface_timeout_ms = 0\nwaiting_connections_per_uid = 5000\n", "c.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("c.toml:2:22: `daemon.preface_timeout_ms` must be between 100 and 60000 (got 0)"));
  EXPECT_THAT(bad.status().message(),
              HasSubstr("c.toml:3:31: `daemon.waiting_connections_per_uid` must be between 1 and 1024 (got 5000)"));
}

TEST(Config, PendingApprovalCapsHaveDefaultsRangesAndAgree) {
  auto defaults = parse_config("", "c.toml");
  ASSERT_TRUE(defaults.ok()) << defaults.status().message();
  EXPECT_EQ(defaults->approvals.max_pending_per_uid, 32u);
  EXPECT_EQ(defaults->approvals.max_pending, 256u);
  auto set = parse_config("[approvals]\nmax_pending_per_uid = 4\nmax_pending = 10\n", "c.toml");
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->approvals.max_pending_per_uid, 4u);
  EXPECT_EQ(set->approvals.max_pending, 10u);
  auto zero = parse_config("[approvals]\nmax_pending_per_uid = 0\n", "c.toml");
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.status().message(),
              HasSubstr("c.toml:2:23: `approvals.max_pending_per_uid` must be between 1 and 100000 (got 0)"));
  auto below = parse_config("[approvals]\nmax_pending_per_uid = 40\nmax_pending = 20\n", "c.toml");
  ASSERT_FALSE(below.ok());
  EXPECT_THAT(below.status().message(),
              HasSubstr("c.toml:3:15: `approvals.max_pending` (20) is below `approvals.max_pending_per_uid` (40)"));
  auto below_default = parse_config("[approvals]\nmax_pending_per_uid = 300\n", "c.toml");
  ASSERT_FALSE(below_default.ok());
  EXPECT_THAT(below_default.status().message(), HasSubstr("c.toml:2:23: `approvals.max_pending` (256) is below"));
}

TEST(Config, MetricsAreOffByDefaultAndListenOnlyOnAUnixSocketOrLoopback) {
  EXPECT_EQ(parse_config("", "c.toml")->metrics.listen, "");
  auto unix_socket = parse_metrics_listen("unix:/run/codexd/metrics.sock");
  ASSERT_TRUE(unix_socket.ok());
  EXPECT_FALSE(unix_socket->tcp);
  EXPECT_EQ(unix_socket->path, "/run/codexd/metrics.sock");
  auto v4 = parse_metrics_listen("tcp:127.0.0.1:9464");
  ASSERT_TRUE(v4.ok());
  EXPECT_TRUE(v4->tcp);
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 9464);
  auto v6 = parse_metrics_listen("tcp:[::1]:9464");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  for (const char* bad : {"unix:relative", "tcp:0.0.0.0:9464", "tcp:192.168.1.2:9464", "tcp:127.0.0.1:0",
                          "tcp:127.0.0.1:70000", "tcp:127.0.0.1", "http://localhost:9464", "/abs/path"}) {
    EXPECT_FALSE(parse_metrics_listen(bad).ok()) << bad;
  }
  EXPECT_THAT(parse_metrics_listen("tcp:0.0.0.0:9464").status().message(), HasSubstr("only loopback addresses"));
  auto c = parse_config("[metrics]\nlisten = \"tcp:10.0.0.1:9464\"\n", "c.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("c.toml:2:10: `metrics.listen` must be"));
}

TEST(Config, StateDirHasAModeDefaultAndMustBeAbsolute) {
  auto system = parse_config("[daemon]\nmode = \"system\"\n", "c.toml");
  ASSERT_TRUE(system.ok()) << system.status().message();
  EXPECT_EQ(state_dir(*system), "/var/lib/codexd");
  auto set = parse_config("[daemon]\nstate_dir = \"/srv/codexd-state\"\n", "c.toml");
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(state_dir(*set), "/srv/codexd-state");
  auto relative = parse_config("[daemon]\nstate_dir = \"state\"\n", "c.toml");
  ASSERT_FALSE(relative.ok());
  EXPECT_THAT(relative.status().message(), HasSubstr("c.toml:2:"));
  EXPECT_THAT(relative.status().message(), HasSubstr("`daemon.state_dir` must be an absolute path"));
}

TEST(Config, AnUnknownApprovalPolicyIsAnErrorAtItsPosition) {
  const std::string valid = "must be one of untrusted, on-request, never, granular";
  auto top = parse_config("[policy]\napproval_policy = \"sometimes\"\n", "/etc/codexd/codexd.toml");
  ASSERT_FALSE(top.ok());
  EXPECT_EQ(top.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(top.status().message(),
            "/etc/codexd/codexd.toml:2:19: `policy.approval_policy` " + valid + " (got \"sometimes\")");

  auto agent = parse_config("[policy]\napproval_policy = \"never\"\n[agents.\"ci-bot\"]\napproval_policy = \"sometimes\"\n",
                            "c.toml");
  ASSERT_FALSE(agent.ok());
  EXPECT_EQ(agent.status().message(), "c.toml:4:19: `agents.ci-bot.approval_policy` " + valid + " (got \"sometimes\")");

  auto not_a_string = parse_config("[agents.x]\napproval_policy = 1\n", "c.toml");
  ASSERT_FALSE(not_a_string.ok());
  EXPECT_EQ(not_a_string.status().message(), "c.toml:2:19: `agents.x.approval_policy` " + valid);
}

TEST(Config, ApprovalPolicyForAnAgentFallsBackToTheDaemonsPolicy) {
  auto c = parse_config(R"([policy]
approval_policy = "granular"
granular_sandbox_approval = false
[agents."careful"]
approval_policy = "untrusted"
[agents."plain"]
)",
                        "c.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->agents.at("plain").approval_policy.has_value());
  auto careful = c->approval_policy_for("careful");
  EXPECT_EQ(careful.kind, policy::ApprovalPolicyKind::kUntrusted);
  EXPECT_FALSE(careful.sandbox_approval);  // the granular flags are the daemon's
  EXPECT_TRUE(careful.rules_approval);
  EXPECT_EQ(c->approval_policy_for("plain").kind, policy::ApprovalPolicyKind::kGranular);
  EXPECT_EQ(c->approval_policy_for("").kind, policy::ApprovalPolicyKind::kGranular);
  EXPECT_EQ(default_config(DaemonMode::kUser).approval_policy_for("any").kind, policy::ApprovalPolicyKind::kOnRequest);
}

TEST(Config, TomlSyntaxErrorsHaveAPosition) {
  auto c = parse_config("[exec\nmax_sessions = 10\n", "broken.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), testing::StartsWith("broken.toml:1:"));
}

TEST(Config, HomeIsExpandedInPaths) {
  setenv("HOME", "/home/tester", 1);
  auto c = parse_config("[policy]\nrules_dirs = [\"~/rules\", \"/etc/r\"]\namend_file = \"~/rules/a.rules\"\n", "c.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->policy.rules_dirs, (std::vector<std::string>{"/home/tester/rules", "/etc/r"}));
  EXPECT_EQ(c->policy.amend_file, "/home/tester/rules/a.rules");
}

TEST(Config, UserSocketFollowsXdgRuntimeDir) {
  auto c = parse_config("[daemon]\nmode = \"user\"\n", "c.toml");
  ASSERT_TRUE(c.ok());
  setenv("XDG_RUNTIME_DIR", "/run/user/1234", 1);
  EXPECT_EQ(socket_path(*c), "/run/user/1234/codexd/codexd.sock");
  unsetenv("XDG_RUNTIME_DIR");
  EXPECT_EQ(socket_path(*c), "/tmp/codexd-" + std::to_string(::getuid()) + "/codexd.sock");
}

TEST(Config, ListenOverridesTheDefaultSocket) {
  auto c = parse_config("[daemon]\nmode = \"system\"\nlisten = \"unix:/srv/x.sock\"\n", "c.toml");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(socket_path(*c), "/srv/x.sock");
}

TEST(Config, MissingFileIsNotFound) {
  auto c = load_config_file("/nonexistent/codexd.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace codexd::config

namespace codexd::config {
namespace {

TEST(LimitsConfig, DefaultsStopAForkBombAndAMemoryHog) {
  auto c = parse_config("", "c.toml");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->limits.mechanism, LimitsMechanism::kAuto);
  EXPECT_EQ(c->limits.session.pids_max, 4096u);
  ASSERT_TRUE(c->limits.session.memory_max);
  EXPECT_EQ(*c->limits.session.memory_max, physical_memory_bytes() / 2);
  EXPECT_EQ(c->limits.session.memory_swap_max, 0u);
  EXPECT_EQ(c->limits.agent.pids_max, 8192u);
}

TEST(LimitsConfig, SessionAgentAndPerAgentKeys) {
  auto c = parse_config(R"([limits]
mechanism = "rlimit"
pids_max = 64
memory_max = "256M"
memory_high = "max"
cpu_weight = 50
cpu_max = 150
cpu_seconds = 30
agent_memory_max = 1073741824
agent_cpu_weight = 300
[agents."big"]
memory_max = "2 GiB"
cpu_weight = 400
)",
                        "c.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->limits.mechanism, LimitsMechanism::kRlimit);
  EXPECT_EQ(c->limits.session.pids_max, 64u);
  EXPECT_EQ(c->limits.session.memory_max, 256ull << 20);
  EXPECT_FALSE(c->limits.session.memory_high);
  EXPECT_EQ(c->limits.session.cpu_weight, 50u);
  EXPECT_EQ(c->limits.session.cpu_max_percent, 150u);
  EXPECT_EQ(c->limits.session.cpu_seconds, 30u);
  auto big = c->agent_budget_for("big");
  EXPECT_EQ(big.memory_max, 2ull << 30);
  EXPECT_EQ(big.cpu_weight, 400u);
  EXPECT_EQ(big.pids_max, 8192u);  // not overridden: limits.agent_pids_max's default
  auto other = c->agent_budget_for("other");
  EXPECT_EQ(other.memory_max, 1ull << 30);
  EXPECT_EQ(other.cpu_weight, 300u);
}

TEST(LimitsConfig, BadSizesAndWeightsSayWhatIsAllowed) {
  auto c = parse_config("[limits]\nmemory_max = \"lots\"\ncpu_weight = 0\nmechanism = \"cgroups\"\n[agents.\"a\"]\npids_max = -1\n",
                        "c.toml");
  ASSERT_FALSE(c.ok());
  const std::string& m = c.status().message();
  EXPECT_THAT(m, HasSubstr("c.toml:2:14: `limits.memory_max` must be bytes, \"<n>K|M|G|T\", \"<n>%\" of memory or \"max\" (got \"lots\")"));
  EXPECT_THAT(m, HasSubstr("c.toml:3:14: `limits.cpu_weight` must be between 1 and 10000 (got 0)"));
  EXPECT_THAT(m, HasSubstr("`limits.mechanism` must be one of auto, cgroup, rlimit, none (got \"cgroups\")"));
  EXPECT_THAT(m, HasSubstr("`agents.a.pids_max` must be between 0 and"));
}

// The daemon's own floor and the user-mode scope request (docs/sandbox.md "Where the tree comes
// from").
TEST(LimitsConfig, DaemonFloorAndSystemdScope) {
  auto defaults = parse_config("", "c.toml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->limits.daemon_memory_min, 64ull << 20);
  EXPECT_EQ(defaults->limits.systemd_scope, LimitsSection::SystemdScope::kAuto);
  auto c = parse_config("[limits]\ndaemon_memory_min = \"32M\"\nsystemd_scope = \"always\"\n", "c.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->limits.daemon_memory_min, 32ull << 20);
  EXPECT_EQ(c->limits.systemd_scope, LimitsSection::SystemdScope::kAlways);
  auto none = parse_config("[limits]\ndaemon_memory_min = 0\nsystemd_scope = \"never\"\n", "c.toml");
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_EQ(none->limits.daemon_memory_min, 0u);
  EXPECT_EQ(none->limits.systemd_scope, LimitsSection::SystemdScope::kNever);
  auto bad = parse_config("[limits]\nsystemd_scope = \"yes\"\n", "c.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("`limits.systemd_scope` must be one of auto, always, never"));
}

TEST(ByteSize, UnitsPercentAndMax) {
  EXPECT_EQ(*parse_byte_size("512", 0), 512u);
  EXPECT_EQ(*parse_byte_size("4G", 0), 4ull << 30);
  EXPECT_EQ(*parse_byte_size("1 MiB", 0), 1u << 20);
  EXPECT_EQ(*parse_byte_size("50%", 1000), 500u);
  EXPECT_FALSE(parse_byte_size("max", 0)->has_value());
  EXPECT_FALSE(parse_byte_size("-1", 0).ok());
  EXPECT_FALSE(parse_byte_size("101%", 0).ok());
  EXPECT_FALSE(parse_byte_size("3X", 0).ok());
}

TEST(PrivateTmpConfig, OnByDefaultWithAnHourOfGrace) {
  auto c = parse_config("", "c.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->sandbox.private_tmp);
  EXPECT_EQ(c->sandbox.private_tmp_dir, "");
  EXPECT_EQ(c->sandbox.private_tmp_grace_ms, 3'600'000u);
}

TEST(PrivateTmpConfig, KeysAreReadAndCheckedAtTheirPosition) {
  auto c = parse_config("[sandbox]\nprivate_tmp = false\nprivate_tmp_dir = \"/srv/codexd/tmp\"\nprivate_tmp_grace_ms = 500\n",
                        "c.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->sandbox.private_tmp);
  EXPECT_EQ(c->sandbox.private_tmp_dir, "/srv/codexd/tmp");
  EXPECT_EQ(c->sandbox.private_tmp_grace_ms, 500u);

  auto bad = parse_config("[sandbox]\nprivate_tmp = 1\nprivate_tmp_dir = \"var/tmp\"\nprivate_tmp_grace_ms = -1\n",
                          "c.toml");
  ASSERT_FALSE(bad.ok());
  const std::string& m = bad.status().message();
  EXPECT_THAT(m, HasSubstr("c.toml:2:15: `sandbox.private_tmp` must be true or false"));
  EXPECT_THAT(m, HasSubstr("c.toml:3:19: `sandbox.private_tmp_dir` must be an absolute path (got \"var/tmp\")"));
  EXPECT_THAT(m, HasSubstr("c.toml:4:24: `sandbox.private_tmp_grace_ms` must be between 0 and 2592000000 (got -1)"));
  auto tilde = parse_config("[sandbox]\nprivate_tmp_dir = \"~/tmp\"\n", "c.toml");
  ASSERT_FALSE(tilde.ok());
  EXPECT_THAT(tilde.status().message(), HasSubstr("c.toml:2:19: `sandbox.private_tmp_dir` must be an absolute path without ~"));
}

TEST(NetworkConfig, ProxyEngineKeysHaveTheEnginesDefaultsAndAreRead) {
  auto d = parse_config("", "c.toml");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->network.connect_timeout_ms, 10'000u);
  EXPECT_EQ(d->network.header_timeout_ms, 10'000u);
  EXPECT_EQ(d->network.idle_timeout_ms, 300'000u);
  EXPECT_EQ(d->network.max_header_bytes, 65'536u);
  EXPECT_EQ(d->network.max_connections_per_command, 256u);
  EXPECT_EQ(d->network.max_connections_total, 4096u);

  auto c = parse_config(R"([network]
connect_timeout_ms = 2500
header_timeout_ms = 1500
idle_timeout_ms = 60000
max_header_bytes = 16384
max_connections_per_command = 32
max_connections_total = 512
)",
                        "c.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->network.connect_timeout_ms, 2500u);
  EXPECT_EQ(c->network.header_timeout_ms, 1500u);
  EXPECT_EQ(c->network.idle_timeout_ms, 60'000u);
  EXPECT_EQ(c->network.max_header_bytes, 16'384u);
  EXPECT_EQ(c->network.max_connections_per_command, 32u);
  EXPECT_EQ(c->network.max_connections_total, 512u);
}

TEST(NetworkConfig, BadProxyValuesAreErrorsAtTheirPosition) {
  auto c = parse_config(R"([network]
connect_timeout_ms = 0
header_timeout_ms = "10s"
idle_timeout_ms = 100
max_header_bytes = 99999999
max_connections_per_command = 100
max_connections_total = 10
)",
                        "c.toml");
  ASSERT_FALSE(c.ok());
  const std::string& m = c.status().message();
  EXPECT_THAT(m, HasSubstr("c.toml:2:22: `network.connect_timeout_ms` must be between 100 and 600000 (got 0)"));
  EXPECT_THAT(m, HasSubstr("c.toml:3:21: `network.header_timeout_ms` must be an integer"));
  EXPECT_THAT(m, HasSubstr("c.toml:4:19: `network.idle_timeout_ms` must be between 1000 and 86400000 (got 100)"));
  EXPECT_THAT(m, HasSubstr("c.toml:5:20: `network.max_header_bytes` must be between 1024 and 1048576 (got 99999999)"));
  EXPECT_THAT(m, HasSubstr("c.toml:6:31: `network.max_connections_per_command` (100) must not exceed "
                           "`network.max_connections_total` (10)"));
}

TEST(NetworkConfig, AnAgentsNetworkLimitedReplacesTheDaemons) {
  auto c = parse_config(R"([network]
limited = true
[agents."docs-bot"]
network_limited = false
[agents."builder"]
network = "proxy"
[agents."reader"]
network_limited = true
)",
                        "c.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->network_limited_for("docs-bot"));
  EXPECT_TRUE(c->network_limited_for("builder")) << "unset: [network] limited";
  EXPECT_TRUE(c->network_limited_for("reader"));
  EXPECT_TRUE(c->network_limited_for("anyone-else"));

  auto off = parse_config("[agents.\"reader\"]\nnetwork_limited = true\n", "c.toml");
  ASSERT_TRUE(off.ok());
  EXPECT_TRUE(off->network_limited_for("reader"));
  EXPECT_FALSE(off->network_limited_for("other"));

  auto bad = parse_config("[agents.\"reader\"]\nnetwork_limited = \"yes\"\n", "c.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("c.toml:2:19: `agents.reader.network_limited` must be true or false"));
}

}  // namespace
}  // namespace codexd::config
