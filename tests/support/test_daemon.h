// A real codexd for integration tests: its own temp directory, config, socket and audit log;
// readiness is the daemon's own sd_notify READY=1 (no polling, no sleeps); stopped with
// SIGTERM, and its exit code and socket cleanup are checked by the caller when it matters.
#pragma once

#include <sys/types.h>

#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace codexd::testing {

struct TestDaemonOptions {
  std::string extra_config;    // appended TOML (sections may repeat keys set below only if not set there)
  std::string daemon_config;   // lines added to the [daemon] table
  bool system_mode = false;
  std::string approval_policy = "on-request";
  std::string sandbox_mode = "workspace-write";
  // More [sandbox] keys, one per line (TOML cannot reopen the table in extra_config). Without
  // a private_tmp_dir line the agents' private /tmp live in <dir>/private-tmp.
  std::string sandbox_config;
  std::string rules;           // written to <dir>/rules/test.rules when non-empty
  bool include_default_rules = true;  // policy.include_default_rules
  std::string socket_mode;     // e.g. "0666" so another uid can connect
  std::string socket_dir_mode; // e.g. "0755"
  std::vector<std::string> env;  // extra NAME=VALUE for the daemon process
  std::string start_in_cgroup;   // a cgroup directory the daemon process joins before its exec
};

struct NotifySocket;  // the daemon's NOTIFY_SOCKET (test_daemon.cc)

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class TestDaemon {
 public:
  explicit TestDaemon(TestDaemonOptions options = {});
  ~TestDaemon();
  TestDaemon(const TestDaemon&) = delete;
  TestDaemon& operator=(const TestDaemon&) = delete;

  bool started() const { return pid_ > 0 && ready_; }
  pid_t pid() const { return pid_; }
  const std::string& dir() const { return dir_; }          // temp root (0755), removed at the end
  const std::string& workspace() const { return workspace_; }  // a directory to run commands in
  const std::string& socket_path() const { return socket_; }
  const std::string& audit_log_path() const { return audit_log_; }
  const std::string& log_path() const { return log_path_; }  // the daemon's stdout and stderr
  std::string private_tmp_base() const { return dir_ + "/private-tmp"; }  // unless sandbox_config names one
  std::string daemon_log() const;

  std::shared_ptr<grpc::Channel> channel() const;
  // Adds the x-codexd-agent-id metadata.
  static void label(grpc::ClientContext& context, const std::string& agent_id);

  // SIGTERM and wait; returns the exit status (exit code, or 128+signal).
  int stop();
  // `signal` (SIGUSR1: stop and keep the sessions) and wait; the exit status.
  int stop_with(int signal);
  // SIGKILL to the daemon process alone (what it started keeps running) and wait; 128+9.
  int crash();
  // Starts the daemon again on the same directory, config, socket and state (after stop() or
  // crash(); stops it first if it still runs). Its log is appended to the same file. True
  // once the new daemon is ready.
  bool restart();
  // Sends `signal` (SIGHUP, SIGUSR2: a restart in place) and waits for the daemon's next
  // READY=1; false if it died or did not say it within 30 s.
  bool signal_and_wait_ready(int signal);

  // Runs the codexctl binary against this daemon (optionally as another uid, with stdin).
  ProcessResult codexctl(const std::vector<std::string>& args, const std::string& stdin_data = "",
                         std::optional<uid_t> as_uid = std::nullopt) const;

  static std::string codexd_binary();
  static std::string codexctl_binary();

 private:
  void launch();  // starts the daemon process and waits for READY=1

  TestDaemonOptions options_;
  TempDir temp_;  // under /tmp, which workspace-write keeps a writable root: the workspace lives here
  std::string dir_, workspace_, socket_, audit_log_, log_path_;
  std::unique_ptr<NotifySocket> notify_;  // kept: a restart in place says READY=1 again
  pid_t pid_ = -1;
  bool ready_ = false;
  bool stopped_ = false;
};

// Runs argv to completion, capturing stdout/stderr; as_uid drops to that uid (tests run as root).
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& stdin_data = "",
                          std::optional<uid_t> as_uid = std::nullopt, const std::vector<std::string>& extra_env = {});

}  // namespace codexd::testing
