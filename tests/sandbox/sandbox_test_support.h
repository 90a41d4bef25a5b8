// Shared machinery for the sandbox tests: spawning a LaunchPlan the way the daemon does,
// control runs without a sandbox, scratch directories, and per-backend managers.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "platform/backends/manager_factory.h"
#include "platform/sandbox/sandbox.h"
#include "tests/support/temp_dir.h"

namespace codexd::sandbox::testing {

enum class TestBackend { kBwrap, kLandlock };
std::string backend_name(TestBackend backend);

// The staged copies (cmake/TestStage.cmake): outside every writable root, reachable by nobody.
const std::string& helper_path();  // codexd-sandbox-helper
const std::string& probe_path();   // sandbox_probe

struct RunResult {
  int exit_code = -1;  // -1 when killed by a signal
  int term_signal = 0;
  std::string output;  // stdout + stderr
  // Network mode proxy: what the helper sent over the proxy channel ("codexd-proxy/1 http=..")
  // and how many connections the stand-in proxy (which answers "pong") accepted.
  std::string proxy_message;
  int proxy_connections = 0;
  bool succeeded() const { return exit_code == 0; }
  std::string describe() const;
};

struct RunOptions {
  std::optional<uid_t> uid;      // switch to this uid/gid before exec (tests run as root)
  std::string stdin_data;        // written to the child's stdin, then closed
  // Leak a descriptor (opened on this path, read-write) into the child as fd 5, as a buggy
  // caller might; the helper must close it before the command runs.
  std::string leak_fd_path;
};

// Execs plan.argv with exactly plan.env in plan.cwd, in a new session with PDEATHSIG and
// only fds 0-2 open, like the daemon; waits and returns the result. A plan with a proxy
// channel gets one as descriptor 3, served by a stand-in for the daemon's proxy that
// receives the listening sockets and answers "pong" on every connection.
RunResult run_plan(const LaunchPlan& plan, const RunOptions& options = {});

// The control: the same probe without any sandbox.
RunResult run_unsandboxed(const std::vector<std::string>& argv, const std::string& cwd,
                          const RunOptions& options = {});

// A probe process kept alive until the object dies (stdin pipe closed), for signal, ptrace
// and /proc tests.
class Victim {
 public:
  explicit Victim(const std::string& cwd);
  ~Victim();
  Victim(const Victim&) = delete;
  Victim& operator=(const Victim&) = delete;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
};

// A private directory under /var/tmp (not /tmp: the bwrap backend gives the command a
// private /tmp when /tmp is not a writable root), 0755 like the directories made in it,
// removed at scope exit.
class ScratchDir : public codexd::testing::TempDir {
 public:
  ScratchDir() : TempDir("codexd-sandbox-test", codexd::testing::TempLocation::kOutsideTmp, 0755) {}
};

std::string read_file_or(const std::string& path, const std::string& fallback = "<missing>");
bool path_exists(const std::string& path);

// The manager for `backend`, probed once per test process; nullptr when that backend is not
// usable here (`why` says why).
const SandboxManager* manager_for(TestBackend backend, std::string* why);

struct SpecOptions {
  std::vector<std::string> extra_writable;
  NetworkMode network = NetworkMode::kOff;
  bool include_slash_tmp = false;
  std::vector<std::string> denied_read;
  std::vector<std::string> masked;
  SandboxMode mode = SandboxMode::kWorkspaceWrite;
};
SandboxSpec make_spec(const std::string& cwd, const SpecOptions& options = {});

LaunchPlan make_plan(const SandboxManager& manager, const SandboxSpec& spec,
                     const std::vector<std::string>& argv, const std::string& cwd,
                     std::vector<std::string> env = {});

// Runs `sandbox_probe args...` sandboxed by `manager` under `spec`, in `cwd`.
RunResult run_probe_sandboxed(const SandboxManager& manager, const SandboxSpec& spec,
                              const std::string& cwd, const std::vector<std::string>& args,
                              const RunOptions& options = {});
RunResult run_probe_unsandboxed(const std::string& cwd, const std::vector<std::string>& args,
                                const RunOptions& options = {});

}  // namespace codexd::sandbox::testing

// Skips the current test when `backend` is unusable here, with the reason.
#define CODEXD_MANAGER_OR_SKIP(var, backend)                                          \
  std::string codexd_skip_reason_;                                                    \
  const ::codexd::sandbox::SandboxManager* var =                                     \
      ::codexd::sandbox::testing::manager_for(backend, &codexd_skip_reason_);        \
  if (var == nullptr) GTEST_SKIP() << codexd_skip_reason_
