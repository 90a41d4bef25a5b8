// chmod and chown inside and outside the writable roots, on both backends. Under Landlock the
// helper's metadata keeper performs them (platform/linux/helper/metadata_keeper.h); these
// tests are what a command does in a workspace (chmod +x, install -m, tar x, git checkout,
// cp -a) and what one would try to turn the keeper against the host (symlinks, descriptors,
// a rename race, read-only paths, setuid bits, the keeper's own descriptors).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "platform/linux/landlock_sys.h"
#include "tests/sandbox/backend_param.h"
#include "tests/sandbox/escape_expect.h"

namespace codexd::sandbox::testing {
namespace {

constexpr uid_t kNobody = 65534;

mode_t mode_of(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

class FileMetadata : public BackendTest {
 protected:
  void SetUp() override {
    ws_ = dir_.make_dir("ws");
    dir_.make_dir("ws/src");
    mine_ = dir_.make_file("ws/src/mine", "mine\n");
    dir_.make_dir("ws/.git");
    git_file_ = dir_.make_file("ws/.git/config", "[core]\n");
    dir_.make_dir("outside");
    outside_ = dir_.make_file("outside/existing", "original\n");
    for (const std::string& path : {mine_, git_file_, outside_}) ::chmod(path.c_str(), 0644);
  }

  std::function<void()> mode_stays(const std::string& path, mode_t mode) {
    return [path, mode] { EXPECT_EQ(mode_of(path), mode) << path << " changed"; };
  }

  // Runs `script` with sh in the workspace, sandboxed, and expects it to succeed printing `output`.
  void expect_script(const SandboxManager& manager, const std::string& script, const std::string& output) {
    RunResult run = run_plan(make_plan(manager, make_spec(ws_), {"/bin/sh", "-c", script}, ws_));
    EXPECT_TRUE(run.succeeded()) << run.describe();
    EXPECT_EQ(run.output, output) << run.describe();
  }

  ScratchDir dir_;
  std::string ws_;
  std::string mine_;
  std::string git_file_;
  std::string outside_;
};

TEST_P(FileMetadata, ModesChangeInsideTheWorkspaceByEveryCall) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  expect_allowed(*manager, spec, ws_, {"chmod-mode", mine_, "755"});
  EXPECT_EQ(mode_of(mine_), 0755);
  expect_allowed(*manager, spec, ws_, {"fchmod-open", mine_, "700"});
  EXPECT_EQ(mode_of(mine_), 0700);
  expect_allowed(*manager, spec, ws_, {"fchmodat-dir", ws_ + "/src", "mine", "750"});
  EXPECT_EQ(mode_of(mine_), 0750);
  // glibc's AT_SYMLINK_NOFOLLOW goes through /proc/self/fd/N, which names the caller.
  expect_allowed(*manager, spec, ws_, {"lchmod", mine_, "711"});
  EXPECT_EQ(mode_of(mine_), 0711);
  expect_allowed(*manager, spec, ws_, {"chmod-mode", "src/mine", "640"});  // relative to the cwd
  EXPECT_EQ(mode_of(mine_), 0640);
  // Giving a file to oneself (what tar x does as root) changes nothing and is allowed.
  expect_allowed(*manager, spec, ws_, {"chown", mine_});
}

TEST_P(FileMetadata, WorkspaceToolsThatSetModesWork) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  expect_script(*manager,
                "set -e; cd src; printf '#!/bin/sh\\necho ran\\n' > build.sh; chmod +x build.sh; ./build.sh; "
                "install -m 755 build.sh installed.sh; ./installed.sh; cp -a installed.sh copied.sh; "
                "mkdir t; tar cf t.tar build.sh; cd t; tar xf ../t.tar; ./build.sh",
                "ran\nran\nran\n");
  EXPECT_EQ(mode_of(ws_ + "/src/installed.sh"), 0755);
  EXPECT_EQ(mode_of(ws_ + "/src/copied.sh"), 0755);
  EXPECT_EQ(mode_of(ws_ + "/src/t/build.sh"), mode_of(ws_ + "/src/build.sh"));
}

TEST_P(FileMetadata, GitChecksOutExecutableFiles) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  if (::access("/usr/bin/git", X_OK) != 0) GTEST_SKIP() << "git is not installed";
  expect_script(*manager,
                "set -e; cd src; git init -q repo; cd repo; printf '#!/bin/sh\\necho ran\\n' > run.sh; "
                "chmod +x run.sh; git add run.sh; git -c user.name=t -c user.email=t@t commit -qm m; "
                "rm run.sh; git checkout -q run.sh; ./run.sh",
                "ran\n");
}

TEST_P(FileMetadata, NoModeChangeOutsideTheRoots) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  const std::string control = dir_.make_file("control/file");
  expect_blocked(*manager, spec, ws_, {"chmod-mode", outside_, "777"}, mode_stays(outside_, 0644),
                 {"chmod-mode", control, "777"});
  expect_blocked(*manager, spec, ws_, {"fchmod-open", outside_, "777"}, mode_stays(outside_, 0644),
                 {"fchmod-open", control, "777"});
  expect_blocked(*manager, spec, ws_, {"fchmodat-dir", dir_.sub("outside"), "existing", "777"},
                 mode_stays(outside_, 0644), {"fchmodat-dir", dir_.sub("control"), "file", "777"});
  // Through a symlink inside the workspace, by its name and by /proc/self/fd.
  std::filesystem::create_symlink(outside_, ws_ + "/src/out-link");
  expect_blocked(*manager, spec, ws_, {"chmod-mode", ws_ + "/src/out-link", "777"}, mode_stays(outside_, 0644),
                 {"chmod-mode", control, "777"});
  expect_blocked(*manager, spec, ws_, {"chmod-mode", "/proc/self/cwd/src/out-link", "777"}, mode_stays(outside_, 0644),
                 {"chmod-mode", control, "777"});
  // A device the sandbox may write to is still not the command's to chmod. bwrap's /dev holds
  // bind mounts of the host's nodes: a command running as root changed the host's /dev/null
  // there before the keeper. (Put back if it happens again: the whole machine needs it.)
  const mode_t dev_null = mode_of("/dev/null");
  expect_blocked(*manager, spec, ws_, {"chmod-mode", "/dev/null", "600"}, mode_stays("/dev/null", dev_null),
                 {"chmod-mode", control, "600"});
  if (mode_of("/dev/null") != dev_null) ::chmod("/dev/null", dev_null);
}

TEST_P(FileMetadata, NoModeChangeBelowReadOnlyPaths) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  expect_blocked(*manager, make_spec(ws_), ws_, {"chmod-mode", git_file_, "777"}, mode_stays(git_file_, 0644),
                 {"chmod-mode", dir_.make_file("control/git"), "777"});
  expect_blocked(*manager, make_spec(ws_), ws_, {"chmod-mode", ws_ + "/.git", "777"},
                 mode_stays(ws_ + "/.git", mode_of(ws_ + "/.git")), {"chmod-mode", dir_.make_dir("control/dir"), "777"});
}

TEST_P(FileMetadata, NoSetuidBitInTheWorkspace) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  expect_blocked(*manager, make_spec(ws_), ws_, {"chmod-mode", mine_, "4755"}, mode_stays(mine_, 0644),
                 {"chmod-mode", dir_.make_file("control/suid"), "4755"});
}

// A rename race: the name the command chmods flips between a file of its own and a symlink to
// a file outside. The change must never land outside, however the flips fall.
TEST_P(FileMetadata, SymlinkSwapRaceNeverReachesOutside) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  expect_blocked(*manager, make_spec(ws_), ws_, {"chmod-race", outside_, ws_ + "/src/flip", "100000"},
                 mode_stays(outside_, 0644),
                 {"chmod-race", dir_.make_file("control/target"), dir_.sub("control/flip"), "100000"});
}

// The keeper acts with the command's credentials: what the kernel refuses the command (a file
// of another owner) it refuses the keeper too.
TEST_P(FileMetadata, ModesOfAnotherOwnersFilesStayRefused) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the command as nobody";
  ASSERT_EQ(::chown(ws_.c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(::chown((ws_ + "/src").c_str(), kNobody, kNobody), 0);
  const std::string own = dir_.make_file("ws/src/own", "own\n");
  ASSERT_EQ(::chown(own.c_str(), kNobody, kNobody), 0);
  RunOptions as_nobody;
  as_nobody.uid = kNobody;
  SandboxSpec spec = make_spec(ws_);
  RunResult theirs = run_probe_sandboxed(*manager, spec, ws_, {"chmod-mode", mine_, "777"}, as_nobody);
  EXPECT_FALSE(theirs.succeeded()) << "ESCAPE: " << theirs.describe();
  EXPECT_EQ(mode_of(mine_), 0644);
  RunResult ours = run_probe_sandboxed(*manager, spec, ws_, {"chmod-mode", own, "755"}, as_nobody);
  EXPECT_TRUE(ours.succeeded()) << ours.describe();
  EXPECT_EQ(mode_of(own), 0755);
}

// The keeper is the command's parent (under bwrap also the sandbox's init), with its uid (and
// Landlock domain) and no seccomp filter of its own: its descriptors (the listener above all,
// which could answer the command's own calls) and its memory must stay out of reach.
TEST_P(FileMetadata, TheCommandCannotReachItsKeeper) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  expect_blocked(*manager, make_spec(ws_), ws_, {"parent-fds"});
}

// The keeper performs fchmod and fchown on the caller's descriptor: one opened O_PATH must get
// EBADF as without a sandbox, not a changed mode.
TEST_P(FileMetadata, DescriptorsOpenedOPathGetEbadfAsWithoutASandbox) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  RunResult bare = run_probe_unsandboxed(ws_, {"fchmod-opath", mine_});
  ASSERT_TRUE(bare.succeeded()) << "the kernel's own answer: " << bare.describe();
  expect_allowed(*manager, make_spec(ws_), ws_, {"fchmod-opath", mine_});
  EXPECT_EQ(mode_of(mine_), 0644);
}

// The command shares its keeper's uid. Under bwrap the keeper is the sandbox's init, which the
// kernel shields from SIGSTOP sent inside its namespace; under Landlock the command gets a
// Landlock domain of its own that scopes its signals away from the keeper (ABI 6).
TEST_P(FileMetadata, TheCommandCannotStopItsKeeper) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  if (GetParam() == TestBackend::kLandlock && linux_backend::landlock_abi_version() < 6) {
    GTEST_SKIP() << "Landlock ABI " << linux_backend::landlock_abi_version()
                 << " cannot scope signals (ABI 6): the keeper can be stopped by its command";
  }
  expect_allowed(*manager, make_spec(ws_), ws_, {"stop-parent-chmod", mine_});
  EXPECT_EQ(mode_of(mine_), 0750);
}

CODEXD_INSTANTIATE_BOTH_BACKENDS(FileMetadata);

}  // namespace
}  // namespace codexd::sandbox::testing
