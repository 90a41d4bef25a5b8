#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "platform/sandbox/protected_paths.h"
#include "platform/sandbox/sandbox.h"
#include "tests/sandbox/sandbox_test_support.h"

namespace codexd::sandbox {
namespace {

using testing::ScratchDir;

std::vector<std::string> root_paths(const SandboxSpec& spec) {
  std::vector<std::string> out;
  for (const WritableRoot& r : spec.writable_roots) out.push_back(r.root);
  return out;
}

const WritableRoot* find_root(const SandboxSpec& spec, const std::string& path) {
  for (const WritableRoot& r : spec.writable_roots) {
    if (r.root == path) return &r;
  }
  return nullptr;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

Result<SandboxSpec> resolve(const SandboxPolicy& policy, const std::string& cwd,
                            std::optional<std::string> tmpdir = std::nullopt) {
  ResolveContext context;
  context.cwd = cwd;
  context.tmpdir_env = std::move(tmpdir);
  return resolve_sandbox_spec(policy, context);
}

Result<SandboxSpec> resolve_private(const SandboxPolicy& policy, const std::string& cwd, const std::string& mine,
                                    std::optional<std::string> tmpdir = std::nullopt) {
  ResolveContext context;
  context.cwd = cwd;
  context.tmpdir_env = std::move(tmpdir);
  context.private_tmp = mine;
  return resolve_sandbox_spec(policy, context);
}

// The one decision about /tmp: the private directory replaces the host's, unless the host's is
// named as a root (or /tmp is excluded).
TEST(ResolveSpec, APrivateTmpReplacesTheHostTmpUnlessItIsNamed) {
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  std::string mine = dir.make_dir("private");
  SandboxPolicy policy;
  Result<SandboxSpec> spec = resolve_private(policy, ws, mine, "/tmp/user-tmp");
  ASSERT_TRUE(spec.ok()) << spec.status().to_string();
  EXPECT_EQ(spec->private_tmp, mine);
  EXPECT_FALSE(contains(root_paths(*spec), "/tmp"));
  EXPECT_FALSE(contains(root_paths(*spec), mine)) << "not a root: the backend decides how to show it";

  policy.writable_roots = {"/tmp"};
  spec = resolve_private(policy, ws, mine);
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->private_tmp.has_value());
  EXPECT_TRUE(contains(root_paths(*spec), "/tmp"));

  policy.writable_roots = {};
  policy.exclude_slash_tmp = true;
  spec = resolve_private(policy, ws, mine);
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->private_tmp.has_value());

  policy.exclude_slash_tmp = false;
  policy.mode = SandboxMode::kReadOnly;
  spec = resolve_private(policy, ws, mine);
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->private_tmp.has_value()) << "read-only writes nowhere";
}

TEST(ResolveSpec, RejectsBadPaths) {
  ScratchDir dir;
  SandboxPolicy policy;
  EXPECT_EQ(resolve(policy, "relative/cwd").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(resolve(policy, "").status().code(), StatusCode::kInvalidArgument);
  policy.writable_roots = {"relative"};
  EXPECT_EQ(resolve(policy, dir.path()).status().code(), StatusCode::kInvalidArgument);
  policy.writable_roots = {""};
  EXPECT_EQ(resolve(policy, dir.path()).status().code(), StatusCode::kInvalidArgument);
  policy.writable_roots = {std::string("/var/tmp\0/etc", 13)};
  EXPECT_EQ(resolve(policy, dir.path()).status().code(), StatusCode::kInvalidArgument);
  policy.writable_roots = {};
  policy.denied_read = {"secrets"};
  EXPECT_EQ(resolve(policy, dir.path()).status().code(), StatusCode::kInvalidArgument);
}

TEST(ResolveSpec, RootAndKernelStateCanNeverBeWritable) {
  ScratchDir dir;
  SandboxPolicy policy;
  for (const char* bad : {"/", "/proc", "/proc/sys", "/sys/kernel", "/var/.."}) {
    policy.writable_roots = {bad};
    EXPECT_EQ(resolve(policy, dir.path()).status().code(), StatusCode::kInvalidArgument) << bad;
  }
  std::filesystem::create_directory_symlink("/", dir.sub("to-root"));
  policy.writable_roots = {dir.sub("to-root")};
  EXPECT_FALSE(resolve(policy, dir.path()).ok());
}

TEST(ResolveSpec, WorkspaceWriteRootsInCodexOrderSortedBySpecificity) {
  ScratchDir dir;
  std::string extra = dir.make_dir("a/b/extra");
  std::string ws = dir.make_dir("ws");
  std::string tmpdir = dir.make_dir("t");
  SandboxPolicy policy;
  policy.writable_roots = {extra};
  Result<SandboxSpec> spec = resolve(policy, ws, tmpdir);
  ASSERT_TRUE(spec.ok()) << spec.status().to_string();
  std::vector<std::string> roots = root_paths(*spec);
  EXPECT_TRUE(contains(roots, extra));
  EXPECT_TRUE(contains(roots, ws));
  EXPECT_TRUE(contains(roots, "/tmp"));
  EXPECT_TRUE(contains(roots, tmpdir));
  EXPECT_TRUE(std::is_sorted(roots.begin(), roots.end(), [](const std::string& a, const std::string& b) {
    return std::count(a.begin(), a.end(), '/') < std::count(b.begin(), b.end(), '/');
  }));
  EXPECT_EQ(spec->network, NetworkMode::kOff);

  policy.exclude_slash_tmp = true;
  policy.exclude_tmpdir_env_var = true;
  spec = resolve(policy, ws, tmpdir);
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(contains(root_paths(*spec), "/tmp"));
  EXPECT_FALSE(contains(root_paths(*spec), tmpdir));
}

TEST(ResolveSpec, RelativeTmpdirIsIgnoredAndMissingRootsSkipped) {
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  SandboxPolicy policy;
  policy.exclude_slash_tmp = true;
  policy.writable_roots = {dir.sub("does-not-exist")};
  Result<SandboxSpec> spec = resolve(policy, ws, std::string("relative/tmp"));
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(root_paths(*spec), std::vector<std::string>{ws});
  std::string notes;
  for (const std::string& n : spec->notes) notes += n + "\n";
  EXPECT_NE(notes.find("skipped missing"), std::string::npos) << notes;
  EXPECT_NE(notes.find("$TMPDIR ignored"), std::string::npos) << notes;
}

TEST(ResolveSpec, SymlinkedRootIsCanonicalized) {
  ScratchDir dir;
  std::string real = dir.make_dir("real");
  std::string ws = dir.make_dir("ws");
  std::filesystem::create_directory_symlink(real, dir.sub("link"));
  SandboxPolicy policy;
  policy.exclude_slash_tmp = true;
  policy.writable_roots = {dir.sub("link")};
  Result<SandboxSpec> spec = resolve(policy, ws);
  ASSERT_TRUE(spec.ok()) << spec.status().to_string();
  EXPECT_TRUE(contains(root_paths(*spec), real));
  EXPECT_FALSE(contains(root_paths(*spec), dir.sub("link")));
}

TEST(ResolveSpec, SymlinkPlantedInsideAWritableRootIsRejected) {
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  std::string elsewhere = dir.make_dir("elsewhere");
  std::filesystem::create_directory_symlink(elsewhere, ws + "/planted");
  SandboxPolicy policy;
  policy.exclude_slash_tmp = true;
  policy.writable_roots = {ws + "/planted"};
  Result<SandboxSpec> spec = resolve(policy, ws);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("symlink inside writable root"), std::string::npos);
}

TEST(ResolveSpec, ProtectedSubpathsOfAPlainRepository) {
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  dir.make_dir("ws/.git/hooks");
  dir.make_dir("ws/.agents");
  std::string other = dir.make_dir("other");
  SandboxPolicy policy;
  policy.exclude_slash_tmp = true;
  policy.writable_roots = {other};
  Result<SandboxSpec> spec = resolve(policy, ws);
  ASSERT_TRUE(spec.ok());
  const WritableRoot* root = find_root(*spec, ws);
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->read_only_subpaths,
            (std::vector<std::string>{ws + "/.git", ws + "/.agents", ws + "/.codex"}));
  // .codex is protected even when missing, but only for the cwd root.
  const WritableRoot* other_root = find_root(*spec, other);
  ASSERT_NE(other_root, nullptr);
  EXPECT_TRUE(other_root->read_only_subpaths.empty());
}

TEST(ResolveSpec, WorktreeGitdirAndCommondirAreProtected) {
  ScratchDir dir;
  std::string main_git = dir.make_dir("main/.git");
  std::string wt_gitdir = dir.make_dir("main/.git/worktrees/wt");
  dir.make_file("main/.git/worktrees/wt/commondir", "../..\n");
  std::string ws = dir.make_dir("wt");
  dir.make_file("wt/.git", "gitdir: " + wt_gitdir + "\n");
  SandboxPolicy policy;
  policy.exclude_slash_tmp = true;
  Result<SandboxSpec> spec = resolve(policy, ws);
  ASSERT_TRUE(spec.ok());
  const WritableRoot* root = find_root(*spec, ws);
  ASSERT_NE(root, nullptr);
  EXPECT_TRUE(contains(root->read_only_subpaths, ws + "/.git"));
  EXPECT_TRUE(contains(root->read_only_subpaths, wt_gitdir));
  EXPECT_TRUE(contains(root->read_only_subpaths, main_git));
}

TEST(ResolveSpec, SubmodulePointerIsResolvedRelativeToItsDirectory) {
  ScratchDir dir;
  std::string modules = dir.make_dir("super/.git/modules/sub");
  std::string sub = dir.make_dir("super/sub");
  dir.make_file("super/sub/.git", "gitdir: ../.git/modules/sub\n");
  Result<std::string> pointer = read_gitdir_pointer(sub + "/.git");
  ASSERT_TRUE(pointer.ok());
  EXPECT_EQ(*pointer, modules);
  SandboxPolicy policy;
  policy.exclude_slash_tmp = true;
  Result<SandboxSpec> spec = resolve(policy, sub);
  ASSERT_TRUE(spec.ok());
  EXPECT_TRUE(contains(spec->writable_roots.front().read_only_subpaths, modules));
}

TEST(ResolveSpec, DanglingGitdirPointerIsNotedNotFatal) {
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  dir.make_file("ws/.git", "gitdir: /nonexistent/worktree\n");
  SandboxPolicy policy;
  policy.exclude_slash_tmp = true;
  Result<SandboxSpec> spec = resolve(policy, ws);
  ASSERT_TRUE(spec.ok());
  EXPECT_TRUE(contains(spec->writable_roots.front().read_only_subpaths, ws + "/.git"));
}

TEST(ResolveSpec, ModesReadOnlyAndDangerFullAccess) {
  ScratchDir dir;
  SandboxPolicy policy;
  policy.mode = SandboxMode::kReadOnly;
  policy.network = NetworkMode::kOff;
  Result<SandboxSpec> spec = resolve(policy, dir.path());
  ASSERT_TRUE(spec.ok());
  EXPECT_TRUE(spec->writable_roots.empty());
  EXPECT_FALSE(spec->has_full_disk_write());

  policy.mode = SandboxMode::kDangerFullAccess;
  spec = resolve(policy, dir.path());
  ASSERT_TRUE(spec.ok());
  EXPECT_TRUE(spec->has_full_disk_write());
  EXPECT_EQ(spec->network, NetworkMode::kHost);

  policy.denied_read = {dir.make_file("secret")};
  EXPECT_EQ(resolve(policy, dir.path()).status().code(), StatusCode::kInvalidArgument);
}

TEST(ResolveSpec, DeniedAndMaskedPathsAreCanonical) {
  ScratchDir dir;
  std::string secret = dir.make_file("real/secret");
  std::filesystem::create_directory_symlink(dir.sub("real"), dir.sub("alias"));
  SandboxPolicy policy;
  policy.exclude_slash_tmp = true;
  policy.denied_read = {dir.sub("alias/secret")};
  ResolveContext context;
  context.cwd = dir.path();
  context.masked_paths = {dir.sub("alias")};
  Result<SandboxSpec> spec = resolve_sandbox_spec(policy, context);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->denied_read, std::vector<std::string>{secret});
  EXPECT_EQ(spec->masked_paths, std::vector<std::string>{dir.sub("real")});
  EXPECT_TRUE(spec->has_denied_reads());
}

}  // namespace
}  // namespace codexd::sandbox
