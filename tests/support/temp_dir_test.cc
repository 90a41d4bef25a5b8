#include "tests/support/temp_dir.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace codexd::testing {
namespace {

namespace fs = std::filesystem;

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(TempDir, MadeInTheChosenPlaceAndRemovedWithItsContents) {
  std::string path;
  {
    TempDir dir("codexd-tdtest");
    path = dir.path();
    EXPECT_EQ(path.rfind("/tmp/codexd-tdtest-", 0), 0u) << path;
    EXPECT_TRUE(fs::is_directory(path));
    EXPECT_EQ(mode_of(path), 0700u);  // mkdtemp's own mode when none is asked for
    dir.make_file("a/b/c.txt", "hello");
    EXPECT_EQ(read(dir.sub("a/b/c.txt")), "hello");
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(TempDir, OutsideTmpIsUnderVarTmp) {
  TempDir dir("codexd-tdtest", TempLocation::kOutsideTmp);
  EXPECT_EQ(dir.path().rfind("/var/tmp/codexd-tdtest-", 0), 0u) << dir.path();
}

TEST(TempDir, SystemTempIsResolved) {
  TempDir dir("codexd-tdtest", TempLocation::kSystemTemp);
  EXPECT_EQ(dir.path(), fs::canonical(dir.path()).string());
  EXPECT_EQ(fs::path(dir.path()).parent_path(), fs::canonical(fs::temp_directory_path()));
}

TEST(TempDir, ModeAppliesToTheRootAndToMadeDirectories) {
  TempDir dir("codexd-tdtest", TempLocation::kTmp, 0755);
  EXPECT_EQ(mode_of(dir.path()), 0755u);
  std::string sub = dir.make_dir("x/y");
  EXPECT_EQ(sub, dir.path() + "/x/y");
  EXPECT_TRUE(fs::is_directory(sub));
  EXPECT_EQ(mode_of(sub), 0755u);
  EXPECT_EQ(dir.make_file("f"), dir.path() + "/f");
  EXPECT_EQ(read(dir.path() + "/f"), "original\n");
}

TEST(TempDir, MovingHandsOverTheDirectory) {
  TempDir a("codexd-tdtest");
  std::string path = a.path();
  {
    TempDir b(std::move(a));
    EXPECT_EQ(b.path(), path);
    EXPECT_TRUE(fs::exists(path));
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(MakeTempDir, BelowAGivenParentAndKeptUntilTheParentGoes) {
  TempDir root("codexd-tdtest");
  std::string child = make_temp_dir(root.path(), "d", 0750);
  EXPECT_EQ(fs::path(child).parent_path(), fs::path(root.path()));
  EXPECT_EQ(mode_of(child), 0750u);
  EXPECT_THROW(make_temp_dir("/nonexistent-parent", "d"), std::runtime_error);
}

}  // namespace
}  // namespace codexd::testing
