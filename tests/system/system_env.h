// What every system test shares: a temp root outside /tmp and two real users created once per
// run (removed at the end, also after failures). Needs root; otherwise every test skips.
#pragma once

#include <memory>
#include <string>

#include "tests/support/test_users.h"
#include "tests/system/system_daemon.h"

namespace codexd::testing {

struct SystemEnv {
  bool ready = false;
  std::string why_not;       // skip reason when !ready
  std::unique_ptr<TempRoot> root;
  std::unique_ptr<TestUsers> users;
  std::string socket_group;  // like production's `codexd`: both users are members
  std::string extra_group;   // only user a (supplementary groups, reviewer_group)
  TestUser a, b;
  std::string a_ws, b_ws;    // <home>/ws, owned by the user; homes are 0700
};

// Built on first use, torn down by the global test environment (main.cc).
SystemEnv& system_env();
void tear_down_system_env();

// A fresh directory under the root (0755) for one daemon: config, log, rules/, run/.
std::string make_daemon_dir();

// A system-mode config like /etc/codexd/codexd.toml on a real install: socket 0660 root:<socket
// group> in a 0750 directory, rules from <dir>/rules, audit log, workspace-write sandbox.
// `daemon_extra` goes inside [daemon]; `tail` is appended (more sections).
std::string system_mode_config(const std::string& dir, const std::string& daemon_extra = "",
                               const std::string& tail = "", const std::string& approval_policy = "on-request");
inline std::string socket_of(const std::string& dir) { return dir + "/run/codexd.sock"; }

}  // namespace codexd::testing

#define REQUIRE_SYSTEM_ENV()                                   \
  ::codexd::testing::SystemEnv& env = ::codexd::testing::system_env(); \
  if (!env.ready) GTEST_SKIP() << env.why_not
