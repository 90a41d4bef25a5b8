// File-system escapes, run against both backends (bwrap, and Landlock forced).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/sandbox/backend_param.h"
#include "tests/sandbox/escape_expect.h"

namespace codexd::sandbox::testing {
namespace {

class FilesystemEscape : public BackendTest {
 protected:
  void SetUp() override {
    ws_ = dir_.make_dir("ws");
    dir_.make_dir("ws/src");
    dir_.make_file("ws/src/mine", "mine\n");
    dir_.make_file("ws/top-level-existing", "top\n");
    outside_ = dir_.make_dir("outside");
    existing_ = dir_.make_file("outside/existing", "original\n");
  }

  std::function<void()> outside_untouched() {
    return [this] {
      EXPECT_EQ(read_file_or(existing_), "original\n");
      std::vector<std::string> entries;
      for (const auto& e : std::filesystem::directory_iterator(outside_)) entries.push_back(e.path());
      EXPECT_EQ(entries, std::vector<std::string>{existing_}) << "something appeared outside";
    };
  }

  ScratchDir dir_;
  std::string ws_;
  std::string outside_;
  std::string existing_;
};

TEST_P(FilesystemEscape, WritableRootIsWritable) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  expect_allowed(*manager, spec, ws_, {"write", ws_ + "/src/new-file"});
  expect_allowed(*manager, spec, ws_, {"append", ws_ + "/src/mine"});
  expect_allowed(*manager, spec, ws_, {"append", ws_ + "/top-level-existing"});
  expect_allowed(*manager, spec, ws_, {"mkdir", ws_ + "/src/newdir"});
  expect_allowed(*manager, spec, ws_, {"rename", ws_ + "/src/new-file", ws_ + "/src/renamed"});
  expect_allowed(*manager, spec, ws_, {"unlink", ws_ + "/src/renamed"});
  EXPECT_EQ(read_file_or(ws_ + "/src/mine"), "mine\nmore\n");
  EXPECT_FALSE(path_exists(ws_ + "/src/renamed"));
  EXPECT_TRUE(path_exists(ws_ + "/src/newdir"));
}

TEST_P(FilesystemEscape, TopLevelEntriesOfTheCwdRoot) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  RunResult run = run_probe_sandboxed(*manager, spec, ws_, {"write", ws_ + "/new-top-level"});
  if (GetParam() == TestBackend::kBwrap) {
    EXPECT_TRUE(run.succeeded()) << run.describe();
  } else {
    // Documented Landlock limitation: .codex is protected in the cwd root, so the root is a
    // "spine" directory whose direct entries cannot be created (docs/sandbox.md).
    EXPECT_FALSE(run.succeeded()) << run.describe();
  }
}

TEST_P(FilesystemEscape, SlashTmpAsAWritableRoot) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SpecOptions options;
  options.include_slash_tmp = true;
  SandboxSpec spec = make_spec(ws_, options);
  // Write into a directory that exists before the run: under Landlock, /tmp becomes a "spine"
  // (no new top-level entries) whenever a protected name such as /tmp/.codex exists there, and
  // earlier bwrap runs with cwd=/tmp leave that mount point behind (docs/sandbox.md).
  codexd::testing::TempDir dir("codexd-sandbox-test-" + backend_name(GetParam()), codexd::testing::TempLocation::kTmp,
                               0755);
  std::string file = dir.sub("written");
  expect_allowed(*manager, spec, ws_, {"write", file});
  EXPECT_TRUE(path_exists(file)) << "the write must land in the host /tmp";
}

TEST_P(FilesystemEscape, NoWriteDeleteOrRenameOutsideTheRoots) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  // Each destructive control runs on its own copy so one control cannot spoil the next probe.
  expect_blocked(*manager, spec, ws_, {"write", outside_ + "/new"}, outside_untouched(),
                 {"write", ws_ + "/src/control-new"});
  expect_blocked(*manager, spec, ws_, {"append", existing_}, outside_untouched(),
                 {"append", dir_.make_file("control/append")});
  expect_blocked(*manager, spec, ws_, {"truncate", existing_}, outside_untouched(),
                 {"truncate", dir_.make_file("control/truncate")});
  expect_blocked(*manager, spec, ws_, {"chmod", existing_}, outside_untouched(),
                 {"chmod", dir_.make_file("control/chmod")});
  expect_blocked(*manager, spec, ws_, {"chown", existing_}, outside_untouched(),
                 {"chown", dir_.make_file("control/chown")});
  expect_blocked(*manager, spec, ws_, {"setxattr", existing_}, outside_untouched(),
                 {"setxattr", dir_.make_file("control/xattr")});
  expect_blocked(*manager, spec, ws_, {"unlink", existing_}, outside_untouched(),
                 {"unlink", dir_.make_file("control/unlink")});
  expect_blocked(*manager, spec, ws_, {"mkdir", outside_ + "/newdir"}, outside_untouched(),
                 {"mkdir", dir_.sub("control/newdir")});
  expect_blocked(*manager, spec, ws_, {"rename", existing_, outside_ + "/renamed"}, outside_untouched(),
                 {"rename", dir_.make_file("control/ren"), dir_.sub("control/renamed")});
  expect_blocked(*manager, spec, ws_, {"rename", ws_ + "/src/mine", outside_ + "/moved-out"},
                 outside_untouched(), {"rename", dir_.make_file("control/out"), dir_.sub("control/moved")});
  EXPECT_EQ(read_file_or(ws_ + "/src/mine"), "mine\n");
}

TEST_P(FilesystemEscape, NoWriteThroughSymlinks) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  // A symlink already in the workspace pointing out of it.
  std::filesystem::create_directory_symlink(outside_, ws_ + "/src/out-link");
  expect_blocked(*manager, spec, ws_, {"write", ws_ + "/src/out-link/via-link"}, outside_untouched(),
                 {"write", ws_ + "/src/out-link/control"});
  std::filesystem::remove(outside_ + "/control");
  // A symlink the command plants itself.
  expect_blocked(*manager, spec, ws_, {"symlink-write", existing_, ws_ + "/src/planted"},
                 outside_untouched(), {"symlink-write", dir_.make_file("control/sym"), ws_ + "/src/planted2"});
}

TEST_P(FilesystemEscape, NoWriteThroughHardlinks) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  expect_blocked(*manager, spec, ws_, {"hardlink-write", existing_, ws_ + "/src/hard"}, outside_untouched(),
                 {"hardlink-write", dir_.make_file("control/hard"), ws_ + "/src/hard2"});
}

TEST_P(FilesystemEscape, NoWriteThroughProcSelfRoot) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  expect_blocked(*manager, spec, ws_, {"write", "/proc/self/root" + outside_ + "/via-proc-root"},
                 outside_untouched(), {"write", "/proc/self/root" + dir_.sub("control-proc-root")});
}

TEST_P(FilesystemEscape, NoWriteThroughAHostProcessCwd) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  std::string control_dir = dir_.make_dir("control-cwd");
  Victim victim(outside_);
  Victim control_victim(control_dir);
  expect_blocked(*manager, spec, ws_,
                 {"write", "/proc/" + std::to_string(victim.pid()) + "/cwd/via-proc-cwd"}, outside_untouched(),
                 {"write", "/proc/" + std::to_string(control_victim.pid()) + "/cwd/via-proc-cwd"});
}

TEST_P(FilesystemEscape, GitMetadataIsReadOnly) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  dir_.make_file("ws/.git/config", "[core]\n");
  dir_.make_file("ws/.git/HEAD", "ref: refs/heads/main\n");
  dir_.make_dir("ws/.git/hooks");
  SandboxSpec spec = make_spec(ws_);
  std::string control = dir_.make_dir("control-git");
  auto git_untouched = [this] {
    EXPECT_EQ(read_file_or(ws_ + "/.git/config"), "[core]\n");
    EXPECT_TRUE(path_exists(ws_ + "/.git/HEAD"));
    EXPECT_FALSE(path_exists(ws_ + "/.git/hooks/pre-commit"));
    EXPECT_FALSE(path_exists(ws_ + "/git-moved"));
  };
  expect_blocked(*manager, spec, ws_, {"append", ws_ + "/.git/config"}, git_untouched,
                 {"append", dir_.make_file("control-git/config")});
  expect_blocked(*manager, spec, ws_, {"write", ws_ + "/.git/hooks/pre-commit"}, git_untouched,
                 {"write", control + "/pre-commit"});
  expect_blocked(*manager, spec, ws_, {"unlink", ws_ + "/.git/HEAD"}, git_untouched,
                 {"unlink", dir_.make_file("control-git/HEAD")});
  expect_blocked(*manager, spec, ws_, {"rename", ws_ + "/.git", ws_ + "/git-moved"}, git_untouched,
                 {"rename", dir_.make_dir("control-git/dotgit"), control + "/moved"});
  // A hardlink from the writable part of the workspace to a protected file, or a rename
  // over it, must not reach the protected inode either.
  expect_blocked(*manager, spec, ws_, {"hardlink-write", ws_ + "/.git/config", ws_ + "/src/cfg"}, git_untouched,
                 {"hardlink-write", dir_.make_file("control-git/hl"), control + "/hl2"});
  expect_blocked(*manager, spec, ws_, {"rename", ws_ + "/src/mine", ws_ + "/.git/config"}, git_untouched,
                 {"rename", dir_.make_file("control-git/over"), dir_.make_file("control-git/target")});
}

TEST_P(FilesystemEscape, CodexAndAgentsDirectoriesAreReadOnlyAndCodexCannotBeCreated) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  dir_.make_dir("ws/.agents");
  SandboxSpec spec = make_spec(ws_);
  std::string control = dir_.make_dir("control-meta");
  expect_blocked(*manager, spec, ws_, {"mkdir", ws_ + "/.codex/sub"},
                 [this] { EXPECT_FALSE(path_exists(ws_ + "/.codex/sub")); }, {"mkdir", control + "/sub"});
  expect_blocked(*manager, spec, ws_, {"write", ws_ + "/.agents/skill.md"},
                 [this] { EXPECT_FALSE(path_exists(ws_ + "/.agents/skill.md")); },
                 {"write", control + "/skill.md"});
  // Creating .codex for the first time (bwrap leaves an empty mount point; mkdir must fail).
  std::error_code ec;
  std::filesystem::remove(ws_ + "/.codex", ec);
  expect_blocked(*manager, spec, ws_, {"mkdir", ws_ + "/.codex"},
                 [this] {
                   EXPECT_TRUE(!path_exists(ws_ + "/.codex") || std::filesystem::is_empty(ws_ + "/.codex"));
                 },
                 {"mkdir", control + "/.codex"});

  // An existing .codex directory in another workspace.
  std::string ws2 = dir_.make_dir("ws2");
  dir_.make_file("ws2/.codex/config.toml", "model = \"x\"\n");
  SandboxSpec spec2 = make_spec(ws2);
  expect_blocked(*manager, spec2, ws2, {"append", ws2 + "/.codex/config.toml"},
                 [&] { EXPECT_EQ(read_file_or(ws2 + "/.codex/config.toml"), "model = \"x\"\n"); },
                 {"append", dir_.make_file("control-meta/config.toml")});
}

// A symlinked .codex: bwrap cannot pin the link, so the plan is refused (as in Codex's newest
// builds); Landlock can (the cwd root is a spine directory), so it runs and holds.
TEST_P(FilesystemEscape, SymlinkedCodexCannotBeWrittenThroughOrReplaced) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  std::string target = dir_.make_dir("ws/src/codex-real");
  std::filesystem::create_directory_symlink(target, ws_ + "/.codex");
  SandboxSpec spec = make_spec(ws_);
  if (GetParam() == TestBackend::kBwrap) {
    Result<LaunchPlan> plan = manager->plan(spec, {{probe_path(), "true"}, ws_, {}});
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kFailedPrecondition) << plan.status().to_string();
    return;
  }
  expect_blocked(*manager, spec, ws_, {"write", ws_ + "/.codex/config.toml"},
                 [&] { EXPECT_FALSE(path_exists(target + "/config.toml")); },
                 {"write", dir_.make_dir("control-sym") + "/config.toml"});
  expect_blocked(*manager, spec, ws_, {"unlink", ws_ + "/.codex"},
                 [&] { EXPECT_TRUE(std::filesystem::is_symlink(ws_ + "/.codex")); },
                 {"unlink", dir_.make_file("control-sym/link")});
}

TEST_P(FilesystemEscape, WorktreeGitdirAndCommonDirAreReadOnly) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  std::string repos = dir_.make_dir("repos");
  std::string common = dir_.make_dir("repos/main/.git");
  dir_.make_file("repos/main/.git/config", "[core]\n");
  dir_.make_file("repos/main/README", "readme\n");
  std::string gitdir = dir_.make_dir("repos/main/.git/worktrees/wt");
  dir_.make_file("repos/main/.git/worktrees/wt/HEAD", "ref\n");
  dir_.make_file("repos/main/.git/worktrees/wt/commondir", "../..\n");
  std::string wt = dir_.make_dir("wt");
  dir_.make_file("wt/.git", "gitdir: " + gitdir + "\n");
  SpecOptions options;
  options.extra_writable = {repos};  // without protection the gitdir would be writable
  SandboxSpec spec = make_spec(wt, options);
  std::string control = dir_.make_dir("control-wt");
  expect_allowed(*manager, spec, wt, {"append", repos + "/main/README"});
  expect_blocked(*manager, spec, wt, {"append", gitdir + "/HEAD"},
                 [&] { EXPECT_EQ(read_file_or(gitdir + "/HEAD"), "ref\n"); },
                 {"append", dir_.make_file("control-wt/HEAD")});
  expect_blocked(*manager, spec, wt, {"append", common + "/config"},
                 [&] { EXPECT_EQ(read_file_or(common + "/config"), "[core]\n"); },
                 {"append", dir_.make_file("control-wt/config")});
  expect_blocked(*manager, spec, wt, {"write", common + "/hooks-post-checkout"},
                 [&] { EXPECT_FALSE(path_exists(common + "/hooks-post-checkout")); },
                 {"write", control + "/hook"});
  expect_blocked(*manager, spec, wt, {"write", wt + "/.git"},
                 [&] { EXPECT_EQ(read_file_or(wt + "/.git"), "gitdir: " + gitdir + "\n"); },
                 {"write", control + "/dotgit"});
}

TEST_P(FilesystemEscape, DeniedReadPathsAreUnreadable) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  std::string secret = dir_.make_file("secrets/token", "s3cr3t\n");
  std::string secret_file = dir_.make_file("lone-secret", "l0ne\n");
  SpecOptions options;
  options.denied_read = {dir_.sub("secrets"), secret_file};
  SandboxSpec spec = make_spec(ws_, options);
  for (const std::string& path : {secret, secret_file}) {
    RunResult run = run_probe_sandboxed(*manager, spec, ws_, {"read", path});
    EXPECT_FALSE(run.succeeded()) << run.describe();
    EXPECT_EQ(run.output.find("s3cr3t"), std::string::npos);
    EXPECT_EQ(run.output.find("l0ne"), std::string::npos);
    EXPECT_TRUE(run_probe_unsandboxed(ws_, {"read", path}).succeeded());
  }
  expect_allowed(*manager, spec, ws_, {"read", existing_});  // everything else stays readable
}

TEST_P(FilesystemEscape, ReadOnlyModeWritesNowhere) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SpecOptions options;
  options.mode = SandboxMode::kReadOnly;
  SandboxSpec spec = make_spec(ws_, options);
  expect_blocked(*manager, spec, ws_, {"write", ws_ + "/src/new"},
                 [&] { EXPECT_FALSE(path_exists(ws_ + "/src/new")); }, {"write", ws_ + "/src/control"});
  expect_allowed(*manager, spec, ws_, {"read", ws_ + "/src/mine"});
  expect_allowed(*manager, spec, ws_, {"write", "/dev/null"});
}

// Only fds 0-2 cross into the sandbox, even if the caller leaks one.
TEST_P(FilesystemEscape, NoInheritedDescriptorBeyondStdio) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  RunOptions leak;
  leak.leak_fd_path = existing_;
  expect_blocked(*manager, make_spec(ws_), ws_, {"fd-write", "5"},
                 [&] { EXPECT_EQ(read_file_or(existing_), "original\n"); }, {}, leak);
}

CODEXD_INSTANTIATE_BOTH_BACKENDS(FilesystemEscape);

}  // namespace
}  // namespace codexd::sandbox::testing
