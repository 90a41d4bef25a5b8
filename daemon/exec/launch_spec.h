// What to spawn, after policy, approval and sandbox choice: the last step of the plan.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/exec/sandbox_channel.h"
#include "platform/limits/limits.h"
#include "platform/posix/spawn.h"
#include "platform/sandbox/sandbox.h"

namespace codexd::exec {

struct LaunchSpec {
  std::string executable;          // absolute path handed to execve (bwrap, the helper, or the command)
  std::vector<std::string> argv;   // argv[0] included
  std::vector<std::string> env;    // the child's whole environment
  std::string cwd;
  bool tty = false;
  unsigned short rows = 24;
  unsigned short cols = 80;
  std::optional<posix::Credentials> run_as;  // system mode: the caller's identity
  sandbox::Backend sandbox = sandbox::Backend::kNone;  // what confines it, for status and results
  bool forwards_signals = false;   // LaunchPlan::forwards_signals
  bool console = false;            // LaunchPlan::console_fd: the sandbox makes its own terminal
  sandbox::NetworkMode network = sandbox::NetworkMode::kOff;  // what the sandbox gives it
  // Network mode proxy or exec supervision: the launcher expects the sandbox's channel as
  // descriptor 3 (LaunchPlan::channel_fd), and its daemon end goes to `channels`.
  ChannelContents channel;
  std::shared_ptr<SandboxChannelSink> channels;
  // The sandbox's compiled seccomp programs (LaunchPlan::seccomp_program): the launcher gets
  // them as descriptor 6 (posix::kSeccompFdNumber). Held here so that the descriptor outlives the spawn.
  std::shared_ptr<const UniqueFd> seccomp_program;
  // Held while the process runs: the agent's private /tmp is not removed meanwhile.
  std::shared_ptr<const void> private_tmp_lease;
  // Resource limits: the command's own, and the budget its agent's commands share.
  std::string agent_id;
  limits::ResourceLimits session_limits;
  limits::ResourceLimits agent_budget;
};

}  // namespace codexd::exec
