// WritableScope, the metadata keeper's check, on its own: what lies inside a writable root
// and not below a read-only path, named however the descriptor was reached.
#include "platform/linux/writable_scope.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "tests/sandbox/sandbox_test_support.h"

namespace codexd::sandbox::linux_backend {
namespace {

using testing::ScratchDir;

UniqueFd open_path(const std::string& path, int flags = 0) { return UniqueFd(::open(path.c_str(), O_PATH | O_CLOEXEC | flags)); }

mode_t mode_of(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

class WritableScopeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.make_dir("root");
    file_ = dir_.make_file("root/file", "x");
    dir_.make_dir("root/.git");
    git_file_ = dir_.make_file("root/.git/config", "x");
    outside_ = dir_.make_file("outside", "x");
    std::filesystem::create_symlink(outside_, root_ + "/out-link");
  }

  WritableScope scope() const { return WritableScope({root_, dir_.sub("missing-root")}, {root_ + "/.git", root_ + "/.codex"}); }

  ScratchDir dir_;
  std::string root_, file_, git_file_, outside_;
};

TEST_F(WritableScopeTest, InsideTheRootButNotBelowReadOnlyPaths) {
  const WritableScope s = scope();
  EXPECT_TRUE(s.contains(open_path(root_).get())) << "the root itself";
  EXPECT_TRUE(s.contains(open_path(file_).get()));
  EXPECT_FALSE(s.contains(open_path(outside_).get()));
  EXPECT_FALSE(s.contains(open_path(root_ + "/.git").get()));
  EXPECT_FALSE(s.contains(open_path(git_file_).get()));
  EXPECT_FALSE(s.contains(open_path(root_ + "/out-link").get())) << "a symlink is followed to where it leads";
  EXPECT_TRUE(s.contains(open_path(root_ + "/out-link", O_NOFOLLOW).get())) << "the link itself is inside";
  EXPECT_TRUE(s.contains(open_path(root_ + "/../root/file").get())) << "the kernel's name, not the caller's";
  EXPECT_FALSE(s.contains(open_path(dir_.path()).get())) << "the root's parent";
}

TEST_F(WritableScopeTest, WhatHasNoPathIsOutside) {
  const WritableScope s = scope();
  UniqueFd deleted(::open(dir_.make_file("root/deleted", "x").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_EQ(::unlink((root_ + "/deleted").c_str()), 0);
  EXPECT_FALSE(s.contains(deleted.get()));
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  EXPECT_FALSE(s.contains(read_end.get()));
  EXPECT_EQ(s.change_mode(read_end.get(), 0600), EPERM);
}

TEST_F(WritableScopeTest, RootsAreCheckedByInodeNotByPrefix) {
  // "/x/root-evil" starts with "/x/root" but is not below it.
  const std::string sibling = dir_.make_file("root-evil", "x");
  EXPECT_FALSE(scope().contains(open_path(sibling).get()));
}

TEST_F(WritableScopeTest, ModesChangeInsideAndNeverGainSetuid) {
  const WritableScope s = scope();
  EXPECT_EQ(s.change_mode(open_path(file_).get(), 0750), 0);
  EXPECT_EQ(mode_of(file_), 0750);
  EXPECT_EQ(s.change_mode(open_path(file_).get(), 04750), EPERM);
  EXPECT_EQ(s.change_mode(open_path(file_).get(), 02750), EPERM) << "setgid on a file";
  EXPECT_EQ(mode_of(file_), 0750);
  const std::string shared = dir_.make_dir("root/shared");
  EXPECT_EQ(s.change_mode(open_path(shared).get(), 02775), 0) << "setgid on a directory only makes groups inherit";
  EXPECT_EQ(s.change_mode(open_path(root_ + "/out-link", O_NOFOLLOW).get(), 0700), EOPNOTSUPP);
  EXPECT_EQ(s.change_mode(open_path(outside_).get(), 0777), EPERM);
  EXPECT_NE(mode_of(outside_), 0777);
  EXPECT_EQ(s.change_owner(open_path(file_).get(), ::geteuid(), ::getegid()), 0);
  EXPECT_EQ(s.change_owner(open_path(outside_).get(), ::geteuid(), ::getegid()), EPERM);
}

}  // namespace
}  // namespace codexd::sandbox::linux_backend
