#include "platform/linux/bwrap_invocation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "tests/sandbox/sandbox_test_support.h"

namespace codexd::sandbox::linux_backend {
namespace {

using testing::ScratchDir;

long index_of(const std::vector<std::string>& argv, const std::vector<std::string>& seq) {
  auto it = std::search(argv.begin(), argv.end(), seq.begin(), seq.end());
  return it == argv.end() ? -1 : static_cast<long>(it - argv.begin());
}

BwrapFeatures all_features() {
  BwrapFeatures f;
  f.disable_userns = f.cap_drop = f.perms = f.unshare_cgroup_try = f.proc = f.as_pid_1 = true;
  return f;
}

BwrapInvocation build(const SandboxSpec& spec, const std::string& cwd, BwrapFeatures f = all_features()) {
  Result<BwrapInvocation> inv = build_bwrap_invocation("/usr/bin/bwrap", f, spec, cwd,
                                                       {"/opt/codexd/bin/codexd-sandbox-helper", "--", "true"});
  EXPECT_TRUE(inv.ok()) << inv.status().to_string();
  return inv.ok() ? *inv : BwrapInvocation{};
}

TEST(BwrapInvocation, LayoutAndOrder) {
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  dir.make_dir("ws/.git");
  SandboxSpec spec = testing::make_spec(ws);
  std::vector<std::string> argv = build(spec, ws).argv;

  EXPECT_EQ(argv.front(), "/usr/bin/bwrap");
  // No --new-session: the helper, the sandbox's init, stays in the group the daemon signals.
  EXPECT_LT(index_of(argv, {"--new-session"}), 0);
  for (const char* flag : {"--die-with-parent", "--as-pid-1", "--unshare-user", "--disable-userns",
                           "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net",
                           "--unshare-cgroup-try"}) {
    EXPECT_GE(index_of(argv, {flag}), 0) << flag;
  }
  long root = index_of(argv, {"--ro-bind", "/", "/"});
  long dev = index_of(argv, {"--dev", "/dev"});
  long proc = index_of(argv, {"--proc", "/proc"});
  long procsys = index_of(argv, {"--ro-bind-try", "/proc/sys", "/proc/sys"});
  long tmp = index_of(argv, {"--tmpfs", "/tmp"});
  long bind = index_of(argv, {"--bind", ws, ws});
  long git = index_of(argv, {"--ro-bind", ws + "/.git", ws + "/.git"});
  long codex = index_of(argv, {"--tmpfs", ws + "/.codex", "--remount-ro", ws + "/.codex"});
  long helper = index_of(argv, {"--ro-bind", "/opt/codexd/bin/codexd-sandbox-helper"});
  long sep = index_of(argv, {"--", "/opt/codexd/bin/codexd-sandbox-helper"});
  EXPECT_GE(index_of(argv, {"--cap-drop", "ALL"}), 0);
  EXPECT_TRUE(root >= 0 && root < dev && dev < proc && proc < procsys && procsys < tmp && tmp < bind)
      << ::testing::PrintToString(argv);
  EXPECT_TRUE(bind < git && bind < codex && git < helper && codex < helper && helper < sep)
      << bind << " " << git << " " << codex << " " << helper << " " << sep;
  EXPECT_EQ(argv[static_cast<size_t>(codex) - 2], "--perms");
  EXPECT_EQ(argv[static_cast<size_t>(codex) - 1], "555");
  EXPECT_GE(index_of(argv, {"--chdir", ws, "--"}), 0);
}

TEST(BwrapInvocation, NetworkSlashTmpAndNoProcFallback) {
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  testing::SpecOptions options;
  options.network = NetworkMode::kHost;
  options.include_slash_tmp = true;
  SandboxSpec spec = testing::make_spec(ws, options);
  BwrapFeatures f = all_features();
  f.proc = false;
  std::vector<std::string> argv = build(spec, ws, f).argv;
  EXPECT_LT(index_of(argv, {"--unshare-net"}), 0);
  EXPECT_LT(index_of(argv, {"--tmpfs", "/tmp"}), 0) << "/tmp is a writable root: no private /tmp";
  EXPECT_GE(index_of(argv, {"--bind", "/tmp", "/tmp"}), 0);
  EXPECT_LT(index_of(argv, {"--proc", "/proc"}), 0);
  EXPECT_GE(index_of(argv, {"--tmpfs", "/proc", "--remount-ro", "/proc"}), 0);
}

TEST(BwrapInvocation, APrivateTmpIsBoundAtTmpBeforeTheWritableRoots) {
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  std::string mine = dir.make_dir("private/0/0123456789abcdef");
  SandboxSpec spec = testing::make_spec(ws);
  spec.private_tmp = mine;
  BwrapInvocation inv = build(spec, ws);
  long tmp = index_of(inv.argv, {"--bind", mine, "/tmp"});
  EXPECT_GE(tmp, 0) << ::testing::PrintToString(inv.argv);
  EXPECT_LT(tmp, index_of(inv.argv, {"--bind", ws, ws})) << "a root below /tmp must still be mounted over it";
  EXPECT_LT(index_of(inv.argv, {"--tmpfs", "/tmp"}), 0) << "no throw-away tmpfs as well";
  EXPECT_TRUE(std::any_of(inv.rules.begin(), inv.rules.end(), [&](const std::string& r) {
    return r.find("private /tmp: " + mine) != std::string::npos;
  }));
}

TEST(BwrapInvocation, MasksDeniedAndMaskedPaths) {
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  std::string secret_file = dir.make_file("secret.txt");
  std::string socket_dir = dir.make_dir("run/codexd");
  testing::SpecOptions options;
  options.denied_read = {secret_file};
  options.masked = {socket_dir};
  SandboxSpec spec = testing::make_spec(ws, options);
  std::vector<std::string> argv = build(spec, ws).argv;
  EXPECT_GE(index_of(argv, {"--ro-bind", "/dev/null", secret_file}), 0);
  EXPECT_GE(index_of(argv, {"--perms", "000", "--tmpfs", socket_dir, "--remount-ro", socket_dir}), 0);
}

TEST(BwrapInvocation, SymlinkedProtectedPathIsRefused) {
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  std::string target = dir.make_dir("elsewhere");
  std::filesystem::create_directory_symlink(target, ws + "/.agents");
  SandboxSpec spec = testing::make_spec(ws);
  Result<BwrapInvocation> inv = build_bwrap_invocation("/usr/bin/bwrap", all_features(), spec, ws, {"/h"});
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(inv.status().message().find("cannot keep it from being replaced"), std::string::npos);
}

TEST(BwrapInvocation, RefusesDangerAndRelativeHelper) {
  SandboxSpec spec;
  spec.mode = SandboxMode::kDangerFullAccess;
  EXPECT_FALSE(build_bwrap_invocation("/usr/bin/bwrap", all_features(), spec, "/", {"/h"}).ok());
  spec.mode = SandboxMode::kReadOnly;
  EXPECT_FALSE(build_bwrap_invocation("/usr/bin/bwrap", all_features(), spec, "/", {"helper"}).ok());
  EXPECT_FALSE(build_bwrap_invocation("/usr/bin/bwrap", all_features(), spec, "rel", {"/h"}).ok());
}

}  // namespace
}  // namespace codexd::sandbox::linux_backend
