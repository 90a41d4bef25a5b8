// The one place that turns "who asked, where, what, under which sandbox policy" into the exact
// launch: identity, sandbox spec, child environment, and the argv that is exec'd. ExecCommand
// and RunCommand (through the Orchestrator), Sandbox.RunSandboxed (`codexctl sandbox`, also
// with --plan) and `codexd --print-sandbox-plan` all build their launch here, so what a plan
// shows is what a command gets.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "daemon/config/config.h"
#include "daemon/exec/environment.h"
#include "daemon/exec/launch_spec.h"
#include "daemon/orchestrator/exec_request.h"
#include "daemon/orchestrator/identity.h"
#include "daemon/orchestrator/private_tmp.h"
#include "platform/sandbox/sandbox.h"

namespace codexd::orchestrator {

// System mode does not hand the daemon's own environment to another user's command; it
// starts from these.
inline constexpr std::string_view kSystemModePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
inline constexpr std::string_view kSystemModeLang = "C.UTF-8";

struct LaunchBuilderDeps {
  const config::Config* config = nullptr;
  const sandbox::SandboxManager* sandbox = nullptr;  // the daemon's probed manager
  exec::EnvMap base_env;   // user mode: what `inherit` starts from (the daemon's environment)
  std::string socket_dir;  // codexd's socket directory: masked in every sandbox
  // Where launches in network mode proxy or under exec supervision hand their sandbox's channel
  // (the daemon's proxy and exec supervisor). Null: such a launch is built (dry runs print it)
  // but cannot start.
  std::shared_ptr<exec::SandboxChannelSink> channels;
  // Makes and keeps the agents' private /tmp directories. Null with sandbox.private_tmp on:
  // plans name the directory without making it (codexd --print-sandbox-plan).
  std::shared_ptr<PrivateTmpStore> private_tmp;
};

// What a launch is built from, besides identity and sandbox.
struct LaunchInput {
  std::vector<std::string> argv;
  std::string workdir;                     // absolute
  std::map<std::string, std::string> env;  // the caller's variables (filtered like the rest)
  bool unified_exec = false;               // ExecCommand: Codex's NO_COLOR/TERM=dumb/... overlay
  bool tty = false;
  unsigned short rows = 24;
  unsigned short cols = 80;
  std::string agent_id;            // whose budget the command shares
  limits::ResourceLimits limits;   // the request's own (already validated), over limits.*
};

// A finished launch: the sandbox's plan (what formatters print) and what is spawned.
struct BuiltLaunch {
  sandbox::LaunchPlan plan;
  exec::LaunchSpec spec;
};

class LaunchBuilder {
 public:
  explicit LaunchBuilder(LaunchBuilderDeps deps);

  // Who runs the command (system mode: the caller's uid, or root_runs_as for root) and whether
  // that identity may enter `workdir` (INVALID_ARGUMENT / PERMISSION_DENIED otherwise).
  Result<RunAs> resolve_identity(uid_t caller_uid, const std::string& workdir) const;

  // The concrete sandbox for `workdir` under `policy` (the configured one, or RunSandboxed's):
  // writable roots, protected subpaths, $TMPDIR (user mode: the daemon's, never the
  // request's), codexd's socket directory masked, and the private /tmp of (run_as.uid,
  // agent_id), made here (sandbox.private_tmp). PERMISSION_DENIED when that directory or a
  // parent is a symlink, has the wrong owner or is writable by others.
  Result<sandbox::SandboxSpec> resolve_sandbox(const sandbox::SandboxPolicy& policy, const std::string& workdir,
                                               const RunAs& run_as, const std::string& agent_id) const;
  // Where private /tmp directories live: sandbox.private_tmp_dir, else the mode's default.
  std::string private_tmp_base() const;
  // The configured sandbox policy, with the agent's own network mode.
  sandbox::SandboxPolicy configured_policy_for(const std::string& agent_id) const {
    sandbox::SandboxPolicy policy = deps_.config->sandbox.policy;
    policy.network = deps_.config->network_mode_for(agent_id);
    return policy;
  }

  // The child's whole environment, sorted NAME=VALUE.
  std::vector<std::string> environment(const RunAs& run_as, const LaunchInput& input) const;

  // The exact launch. `confined` false runs the command without a sandbox (the policy
  // bypassed it; danger-full-access needs no flag). Errors: FAILED_PRECONDITION when the
  // program cannot be found (unconfined), UNAVAILABLE when no sandbox can enforce the spec;
  // never an unsandboxed fallback. `manager` overrides the daemon's (a forced backend).
  Result<BuiltLaunch> build(const RunAs& run_as, const sandbox::SandboxSpec& spec, bool confined,
                            const LaunchInput& input, const sandbox::SandboxManager* manager = nullptr) const;

  const sandbox::SandboxManager& sandbox() const { return *deps_.sandbox; }
  // The daemon's store (made after the builder, which tells it the base directory).
  void set_private_tmp(std::shared_ptr<PrivateTmpStore> store) { deps_.private_tmp = std::move(store); }
  bool system_mode() const { return deps_.config->daemon.mode == config::DaemonMode::kSystem; }

 private:
  void apply_limits(const LaunchInput& input, exec::LaunchSpec& spec) const;
  LaunchBuilderDeps deps_;
};

// Why a launch failed, as the rejection the caller sees.
Rejection launch_rejection(const Status& failure);

}  // namespace codexd::orchestrator
