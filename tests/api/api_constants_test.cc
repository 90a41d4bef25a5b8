#include "codexd/api_constants.h"

#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace codexd::api {
namespace {

// Sets XDG_RUNTIME_DIR (or unsets it) for one test, then puts the old value back.
class XdgRuntimeDir {
 public:
  explicit XdgRuntimeDir(const char* value) {
    if (const char* old = std::getenv("XDG_RUNTIME_DIR")) old_ = old;
    if (value) {
      ::setenv("XDG_RUNTIME_DIR", value, 1);
    } else {
      ::unsetenv("XDG_RUNTIME_DIR");
    }
  }
  ~XdgRuntimeDir() {
    if (old_) {
      ::setenv("XDG_RUNTIME_DIR", old_->c_str(), 1);
    } else {
      ::unsetenv("XDG_RUNTIME_DIR");
    }
  }

 private:
  std::optional<std::string> old_;
};

std::string tmp_fallback() { return "/tmp/codexd-" + std::to_string(::getuid()) + "/codexd.sock"; }

TEST(DefaultSocketPath, UserModeFollowsXdgRuntimeDir) {
  XdgRuntimeDir xdg("/run/user/1234");
  EXPECT_EQ(default_user_socket_path(), "/run/user/1234/codexd/codexd.sock");
  EXPECT_EQ(default_socket_path(false), "/run/user/1234/codexd/codexd.sock");
}

TEST(DefaultSocketPath, UserModeFallsBackToTmpPerUid) {
  XdgRuntimeDir xdg(nullptr);
  EXPECT_EQ(default_user_socket_path(), tmp_fallback());
  EXPECT_EQ(default_socket_path(false), tmp_fallback());
}

TEST(DefaultSocketPath, ARelativeOrEmptyXdgRuntimeDirIsIgnored) {
  {
    XdgRuntimeDir xdg("relative/dir");
    EXPECT_EQ(default_user_socket_path(), tmp_fallback());
  }
  XdgRuntimeDir xdg("");
  EXPECT_EQ(default_user_socket_path(), tmp_fallback());
}

TEST(DefaultSocketPath, SystemModeIsFixed) {
  XdgRuntimeDir xdg("/run/user/1234");
  EXPECT_EQ(default_socket_path(true), "/run/codexd/codexd.sock");
  EXPECT_STREQ(kSystemSocketPath, "/run/codexd/codexd.sock");
}

TEST(AgentIdMetadataKey, IsTheWireName) {
  // gRPC metadata keys are lower case; clients and the daemon both use this constant.
  EXPECT_STREQ(kAgentIdMetadataKey, "x-codexd-agent-id");
}

}  // namespace
}  // namespace codexd::api
