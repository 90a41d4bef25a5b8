// Real users and groups for tests that need several uids (system mode, privilege drop): created
// with useradd/groupadd under unique names, removed with userdel -r/groupdel by the destructor
// (also when the test fails). Leftovers of a crashed run (its pid no longer exists) are swept by
// the next TestUsers. Needs root.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/test_daemon.h"

namespace codexd::testing {

struct TestUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;  // primary group (the user's own group)
  std::string home;
  std::vector<gid_t> groups;  // getgrouplist(): primary first, then supplementary
};

class TestUsers {
 public:
  // `prefix` must be short (names are prefix + pid + suffix, at most 32 characters).
  explicit TestUsers(std::string prefix = "cxdt");
  ~TestUsers();
  TestUsers(const TestUsers&) = delete;
  TestUsers& operator=(const TestUsers&) = delete;

  // A unique name for `suffix` ("a" -> "cxdt1234a").
  std::string unique_name(const std::string& suffix) const;
  // groupadd --system; returns the gid, or nullopt (error() says why).
  std::optional<gid_t> add_group(const std::string& suffix);
  // useradd --system --user-group, home `home` (created, owned by the user, mode home_mode),
  // shell /bin/sh, supplementary groups by full name.
  std::optional<TestUser> add_user(const std::string& suffix, const std::string& home,
                                   const std::vector<std::string>& groups = {}, mode_t home_mode = 0700);
  const std::string& error() const { return error_; }

  // Removes users/groups of earlier runs whose process is gone (names prefix<pid><letter>).
  static void sweep_stale(const std::string& prefix);

 private:
  std::string prefix_;
  std::vector<std::string> users_, groups_;
  std::string error_;
};

// Runs argv as `user` the way a login would set its credentials: initgroups(name, gid),
// setgid, setuid; cwd "/". Captures stdout/stderr.
ProcessResult run_as_user(const TestUser& user, const std::vector<std::string>& argv, const std::string& stdin_data = "",
                          const std::vector<std::string>& extra_env = {});

// The same, started in the background: the test does other things, then collects the result.
// The constructor returns once argv[0] has been exec'd (not while the child is still becoming
// `user`).
class BackgroundProcess {
 public:
  BackgroundProcess(const TestUser* user, const std::vector<std::string>& argv,
                    const std::vector<std::string>& extra_env = {});
  ~BackgroundProcess();  // kills and reaps a process nobody waited for
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;
  pid_t pid() const { return pid_; }
  // Waits for the exit (SIGKILL after `guard`), returns what it printed.
  ProcessResult wait(std::chrono::seconds guard = std::chrono::seconds(60));

 private:
  pid_t pid_ = -1;
  int out_ = -1, err_ = -1;
  bool reaped_ = false;
};

}  // namespace codexd::testing
