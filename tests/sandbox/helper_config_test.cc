#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>

#include "platform/linux/helper_config.h"
#include "platform/linux/loader_env.h"
#include "platform/linux/seccomp_filter.h"
#include "platform/linux/seccomp_rules.h"

namespace codexd::sandbox::linux_backend {
namespace {

TEST(HelperConfig, RoundTripsEveryField) {
  HelperConfig config;
  config.mode = HelperMode::kLandlock;
  config.network = NetworkMode::kProxy;
  config.channel_fd = 3;
  config.block_unix_sockets = true;
  config.supervise_exec = true;
  config.exec_audit_only = true;
  config.metadata_keeper = true;
  config.writable = {"/work/ws", "/tmp"};
  config.read_only = {"/work/ws/.git"};
  config.unreadable = {"/root/.ssh"};
  config.writable_files = {"/dev/null"};
  config.deferred_env = {"LD_PRELOAD=/x.so", "LD_LIBRARY_PATH=a=b"};
  config.command = {"sh", "-c", "--mode=bwrap -- x"};
  Result<HelperConfig> parsed = parse_helper_args(render_helper_args(config));
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_EQ(parsed->mode, config.mode);
  EXPECT_EQ(parsed->network, config.network);
  EXPECT_EQ(parsed->channel_fd, config.channel_fd);
  EXPECT_EQ(parsed->block_unix_sockets, config.block_unix_sockets);
  EXPECT_EQ(parsed->supervise_exec, config.supervise_exec);
  EXPECT_EQ(parsed->exec_audit_only, config.exec_audit_only);
  EXPECT_EQ(parsed->metadata_keeper, config.metadata_keeper);
  EXPECT_EQ(parsed->writable, config.writable);
  EXPECT_EQ(parsed->read_only, config.read_only);
  EXPECT_EQ(parsed->unreadable, config.unreadable);
  EXPECT_EQ(parsed->writable_files, config.writable_files);
  EXPECT_EQ(parsed->deferred_env, config.deferred_env);
  EXPECT_EQ(parsed->command, config.command);
}

TEST(HelperConfig, TheConsoleDescriptorRoundTripsAndComesOnlyWithBwrapAsInit) {
  HelperConfig config;
  config.init = true;
  config.console_fd = 4;
  config.command = {"sh"};
  Result<HelperConfig> parsed = parse_helper_args(render_helper_args(config));
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_EQ(parsed->console_fd, 4);
  EXPECT_TRUE(parse_helper_args({"--mode=bwrap", "--network=off", "--init", "--console-fd=4", "--", "sh"}).ok());
  // Landlock has no devpts of its own; without --init nobody would hand the terminal on.
  EXPECT_FALSE(parse_helper_args({"--mode=landlock", "--network=off", "--init", "--console-fd=4", "--", "sh"}).ok());
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=off", "--console-fd=4", "--", "sh"}).ok());
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=off", "--init", "--console-fd=1", "--", "sh"}).ok());
  EXPECT_FALSE(parse_helper_args(
                   {"--mode=bwrap", "--network=proxy", "--channel-fd=3", "--init", "--console-fd=3", "--", "sh"})
                   .ok());
}

TEST(HelperConfig, RefusesIncompleteOrUnknownArguments) {
  EXPECT_FALSE(parse_helper_args({"--network=off", "--", "true"}).ok());       // no mode
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--", "true"}).ok());        // no network
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=off"}).ok());     // no command
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=off", "--"}).ok());
  EXPECT_FALSE(parse_helper_args({"--mode=chroot", "--network=off", "--", "true"}).ok());
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=maybe", "--", "true"}).ok());
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=off", "--write=rel", "--", "true"}).ok());
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=off", "--bogus", "--", "true"}).ok());
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=off", "--setenv=NOVALUE", "--", "true"}).ok());
  // The old spelling is not accepted: "on" no longer says which network.
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=on", "--", "true"}).ok());
  // The proxy channel comes with network mode proxy, and only with it.
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=proxy", "--", "true"}).ok());
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=off", "--channel-fd=3", "--", "true"}).ok());
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=proxy", "--channel-fd=2", "--", "true"}).ok());
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=proxy", "--channel-fd=x", "--", "true"}).ok());
  EXPECT_TRUE(parse_helper_args({"--mode=bwrap", "--network=proxy", "--channel-fd=3", "--", "true"}).ok());
  // Exec supervision hands its relay over the same channel: required with it, too; and the
  // keeper, which relays the execs.
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=off", "--supervise-exec", "--metadata-keeper", "--", "true"}).ok());
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=off", "--supervise-exec", "--channel-fd=3", "--", "true"}).ok());
  EXPECT_TRUE(parse_helper_args(
                  {"--mode=bwrap", "--network=off", "--supervise-exec", "--metadata-keeper", "--channel-fd=3", "--", "true"})
                  .ok());
  // Audit mode is a kind of supervision.
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=off", "--exec-audit", "--", "true"}).ok());
}

TEST(SeccompRules, ExecSupervisionRefusesAListenerMadeInsideAndSaysSoInThePlan) {
  HelperConfig config;
  config.supervise_exec = true;
  config.metadata_keeper = true;
  bool refused = false;
  for (const SeccompRule& rule : seccomp_rules(config)) refused = refused || std::string(rule.syscall) == "seccomp";
  EXPECT_TRUE(refused);
  std::vector<std::string> lines = describe_seccomp_rules(config);
  EXPECT_NE(std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.find("execve, execveat") != std::string::npos; }),
            lines.end());
  config.supervise_exec = false;
  config.metadata_keeper = false;
  for (const SeccompRule& rule : seccomp_rules(config)) EXPECT_NE(std::string(rule.syscall), "seccomp");
  config.supervise_exec = true;
  config.metadata_keeper = true;
  EXPECT_TRUE(install_seccomp_filter(config, /*build_only=*/true).ok()) << "the notify rules compile";
}

TEST(LoaderEnv, LoaderVariablesAreDeferredAndMarkersDropped) {
  SplitEnvironment split = split_loader_environment(
      {"PATH=/bin", "LD_PRELOAD=/evil.so", "GLIBC_TUNABLES=x", "MALLOC_ARENA_MAX=2",
       "CODEXD_SANDBOX=none", "CODEX_SANDBOX_NETWORK_DISABLED=0", "GCONV_PATH=/x", "garbage"});
  EXPECT_EQ(split.safe, std::vector<std::string>{"PATH=/bin"});
  EXPECT_EQ(split.deferred, (std::vector<std::string>{"LD_PRELOAD=/evil.so", "GLIBC_TUNABLES=x",
                                                      "MALLOC_ARENA_MAX=2", "GCONV_PATH=/x"}));
}

bool has_rule(const std::vector<SeccompRule>& rules, const std::string& name) {
  return std::any_of(rules.begin(), rules.end(), [&](const SeccompRule& r) { return name == r.syscall; });
}

TEST(SeccompRules, NetworkOffAddsCodexRulesAndMore) {
  HelperConfig off;
  off.network = NetworkMode::kOff;
  std::vector<SeccompRule> rules = seccomp_rules(off);
  for (const char* name : {"connect", "bind", "listen", "accept", "accept4", "sendto", "sendmmsg",
                           "recvmmsg", "getsockopt", "setsockopt", "getpeername", "getsockname",
                           "shutdown", "socket", "socketpair", "ptrace", "process_vm_readv",
                           "process_vm_writev", "io_uring_setup", "io_uring_enter",
                           "io_uring_register", "bpf", "perf_event_open", "keyctl", "add_key",
                           "request_key", "personality", "unshare", "setns", "mount", "umount2",
                           "pivot_root", "chroot", "kexec_load", "init_module", "clone", "clone3"}) {
    EXPECT_TRUE(has_rule(rules, name)) << name;
  }
  for (NetworkMode mode : {NetworkMode::kProxy, NetworkMode::kHost}) {
    HelperConfig on;
    on.network = mode;
    rules = seccomp_rules(on);
    EXPECT_FALSE(has_rule(rules, "connect"));
    EXPECT_TRUE(has_rule(rules, "ptrace"));
  }
}

// A call refused whatever its arguments is printed by name: the label comes from the data,
// so the printed plan cannot list one set of calls while the filter holds another.
TEST(SeccompRules, EveryUnconditionalRefusalIsNamedInItsLabel) {
  for (HelperMode mode : {HelperMode::kBwrap, HelperMode::kLandlock}) {
    HelperConfig config;
    config.mode = mode;
    for (const SeccompRule& rule : seccomp_rules(config)) {
      if (!rule.conditions.empty()) continue;
      EXPECT_NE(rule.label.find(rule.syscall), std::string::npos) << rule.syscall << " / " << rule.label;
    }
  }
  EXPECT_EQ(refuse_group_label({"why", {{"a", 1}, {"b", 2}}, 0, {}}), "refused: a, b (why)");
  EXPECT_EQ(refuse_group_label({"", {{"a", 1}}, 0, "Landlock backend"}), "refused (Landlock backend): a");
  EXPECT_EQ(refuse_group_label({"libc falls back", {{"clone3", 435}}, ENOSYS, {}}),
            "clone3: ENOSYS (libc falls back)");
}

TEST(SeccompRules, EveryConfigurationCompiles) {
  for (NetworkMode network : {NetworkMode::kOff, NetworkMode::kProxy, NetworkMode::kHost}) {
    for (HelperMode mode : {HelperMode::kBwrap, HelperMode::kLandlock}) {
      for (bool block_unix : {false, true}) {
        HelperConfig config;
        config.mode = mode;
        config.network = network;
        config.block_unix_sockets = block_unix;
        Status status = install_seccomp_filter(config, /*build_only=*/true);
        EXPECT_TRUE(status.ok()) << status.to_string();
      }
    }
  }
}

TEST(SeccompRules, DescriptionIsDeduplicated) {
  HelperConfig config;
  std::vector<std::string> lines = describe_seccomp_rules(config);
  int personality_lines = 0;
  for (const std::string& line : lines) personality_lines += line.find("personality") != std::string::npos;
  EXPECT_EQ(personality_lines, 1);
}

const SeccompRule* rule_for(const std::vector<SeccompRule>& rules, const std::string& name) {
  for (const SeccompRule& rule : rules) {
    if (rule.syscall == name) return &rule;
  }
  return nullptr;
}

TEST(MetadataKeeper, ItsCallsNotifyTheKeeperAndTheKeeperKeepsEveryOtherRule) {
  for (HelperMode mode : {HelperMode::kBwrap, HelperMode::kLandlock}) {
    HelperConfig config;
    config.mode = mode;
    config.metadata_keeper = true;
    const std::vector<SeccompRule> command = seccomp_rules(config);
    for (const char* name : {"chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat"}) {
      const SeccompRule* rule = rule_for(command, name);
      ASSERT_NE(rule, nullptr) << name;
      EXPECT_TRUE(rule->notify) << name;
      EXPECT_TRUE(rule->conditions.empty()) << name << ": every such call goes to the keeper";
    }
    EXPECT_NE(rule_for(command, "seccomp"), nullptr) << "no listener of the command's own may answer first";

    const std::vector<SeccompRule> keeper = seccomp_rules(config, FilterRole::kKeeper);
    for (const char* name : {"chmod", "fchmodat2", "chown", "fchownat"}) EXPECT_EQ(rule_for(keeper, name), nullptr) << name;
    for (const char* name : {"execve", "execveat", "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "mount"}) {
      EXPECT_NE(rule_for(keeper, name), nullptr) << name;
    }
    for (const SeccompRule& rule : keeper) EXPECT_FALSE(rule.notify) << rule.syscall;
    EXPECT_TRUE(install_seccomp_filter(config, /*build_only=*/true).ok());
  }
}

TEST(MetadataKeeper, WithoutItLandlockRefusesAndBwrapRefusesTheSetuidBit) {
  HelperConfig landlock;
  landlock.mode = HelperMode::kLandlock;
  const std::vector<SeccompRule> landlock_rules = seccomp_rules(landlock);
  const SeccompRule* chmod = rule_for(landlock_rules, "fchmodat");
  ASSERT_NE(chmod, nullptr);
  EXPECT_FALSE(chmod->notify);
  EXPECT_TRUE(chmod->conditions.empty());
  EXPECT_EQ(chmod->errno_value, EPERM);

  HelperConfig bwrap;
  bwrap.mode = HelperMode::kBwrap;
  const std::vector<SeccompRule> bwrap_rules = seccomp_rules(bwrap);
  chmod = rule_for(bwrap_rules, "fchmodat");
  ASSERT_NE(chmod, nullptr);
  ASSERT_EQ(chmod->conditions.size(), 1U);
  EXPECT_EQ(chmod->conditions[0].arg, 2U);
  EXPECT_EQ(chmod->conditions[0].mask, static_cast<uint64_t>(S_ISUID));
}

TEST(MetadataKeeper, RelaysExecSupervisionAndRoundTrips) {
  EXPECT_TRUE(parse_helper_args({"--mode=landlock", "--network=off", "--channel-fd=3", "--supervise-exec",
                                 "--metadata-keeper", "--", "sh"})
                  .ok());
  HelperConfig config;
  config.mode = HelperMode::kBwrap;
  config.init = true;
  config.metadata_keeper = true;
  config.writable = {"/ws", "/tmp"};
  config.read_only = {"/ws/.git"};
  config.command = {"sh"};
  Result<HelperConfig> parsed = parse_helper_args(render_helper_args(config));
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_TRUE(parsed->metadata_keeper);
  EXPECT_EQ(parsed->writable, config.writable);
  EXPECT_EQ(parsed->read_only, config.read_only);
}

}  // namespace
}  // namespace codexd::sandbox::linux_backend
