// platform/posix/owned_dir as codexd.service runs it: root, but without CAP_FOWNER and
// CAP_DAC_OVERRIDE (the unit's CapabilityBoundingSet). Making a user's directory must then
// still work, which it does only when the mode is set before the directory is given away.
#include "platform/posix/owned_dir.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace codexd::posix {
namespace {

constexpr uid_t kUser = 4242;

// Drops CAP_FOWNER and CAP_DAC_OVERRIDE from this process's effective set (raw capget/capset:
// no libcap in the test's dependencies). Returns false when the kernel refuses.
bool drop_fowner_and_dac_override() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  for (int cap : {CAP_FOWNER, CAP_DAC_OVERRIDE}) {
    data[cap / 32].effective &= ~(1u << (cap % 32));
    data[cap / 32].permitted &= ~(1u << (cap % 32));
  }
  return ::syscall(SYS_capset, &header, data) == 0;
}

// Child exit codes name the step that failed.
enum Step : int { kOk = 0, kCaps = 10, kOpenParent, kMake, kStat, kOwner, kMode, kRemove, kStillThere };

int make_and_remove_as_restricted_root(const std::string& parent) {
  if (!drop_fowner_and_dac_override()) return kCaps;
  int parent_fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent_fd < 0) return kOpenParent;
  Result<UniqueFd> dir = open_owned_dir_at(parent_fd, "agent", {kUser, kUser, 0700}, "test dir");
  if (!dir.ok()) {
    fprintf(stderr, "open_owned_dir_at: %s\n", dir.status().message().c_str());
    return kMake;
  }
  struct stat st {};
  if (::fstat(dir->get(), &st) != 0) return kStat;
  if (st.st_uid != kUser || st.st_gid != kUser) return kOwner;
  if ((st.st_mode & 07777) != 0700) return kMode;
  Status removed = remove_tree_at(parent_fd, "agent", {kUser, kUser, 0700});
  if (!removed.ok()) {
    fprintf(stderr, "remove_tree_at: %s\n", removed.message().c_str());
    return kRemove;
  }
  struct stat gone {};
  if (::fstatat(parent_fd, "agent", &gone, AT_SYMLINK_NOFOLLOW) == 0) return kStillThere;
  return kOk;
}

TEST(OwnedDir, RootWithoutFownerOrDacOverrideMakesAndRemovesAUsersDirectory) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: the directory is given to uid " << kUser;
  testing::TempDir parent("owned-dir", testing::TempLocation::kOutsideTmp, 0755);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(make_and_remove_as_restricted_root(parent.path()));
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kOk) << "failed step (see Step): " << WEXITSTATUS(status);
}

TEST(OwnedDir, AnExistingDirectoryOfAnotherOwnerIsRefusedAndLeftAlone) {
  testing::TempDir parent("owned-dir", testing::TempLocation::kOutsideTmp, 0755);
  ASSERT_EQ(::mkdir(parent.sub("agent").c_str(), 0777), 0);
  ASSERT_EQ(::chmod(parent.sub("agent").c_str(), 0777), 0);
  UniqueFd parent_fd(::open(parent.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(parent_fd);
  Result<UniqueFd> dir = open_owned_dir_at(parent_fd.get(), "agent", {::geteuid(), ::getegid(), 0700}, "test dir");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(dir.status().message().find("mode"), std::string::npos) << dir.status().message();
  struct stat st {};
  ASSERT_EQ(::stat(parent.sub("agent").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0777u);
}

}  // namespace
}  // namespace codexd::posix
