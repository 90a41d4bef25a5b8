// Builds the bwrap command line for a SandboxSpec: Codex's layout (read-only root, fresh
// /dev, writable binds by specificity, protected subpaths re-bound read-only, masks for
// missing protected paths, new session, die-with-parent, user/pid/net namespaces, fresh
// /proc) plus what Codex lacks (no capabilities, IPC/UTS/cgroup namespaces, nested user
// namespaces disabled, /proc/sys and other host-global /proc files read-only, a private
// /tmp, masked and unreadable paths hidden, the helper bound read-only).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "platform/sandbox/sandbox.h"

namespace codexd::sandbox::linux_backend {

// What the probed bwrap supports (bubblewrap 0.8.0 has all of these but --argv0).
struct BwrapFeatures {
  bool disable_userns = false;     // --disable-userns
  bool cap_drop = false;           // --cap-drop ALL
  bool perms = false;              // --perms MODE before --tmpfs
  bool unshare_cgroup_try = false; // --unshare-cgroup-try
  bool as_pid_1 = false;           // --as-pid-1: no unfiltered bwrap reaper inside the sandbox
  bool proc = true;                // a fresh /proc mounts (else the no-proc fallback)
};

struct BwrapInvocation {
  std::vector<std::string> argv;   // [bwrap, ..., --, helper_argv...]
  std::vector<std::string> rules;  // one human-readable line per decision
};

// `helper_argv` starts with the helper's absolute path. `keep_controlling_terminal`: the
// command keeps its PTY (there is never a --new-session: the helper as init must stay in the
// group the daemon signals; the helper's filter refuses TIOCSTI).
Result<BwrapInvocation> build_bwrap_invocation(const std::string& bwrap_path, const BwrapFeatures& features,
                                               const SandboxSpec& spec, const std::string& command_cwd,
                                               const std::vector<std::string>& helper_argv,
                                               bool keep_controlling_terminal = false);

// Host-global files and directories under a fresh /proc that are re-bound read-only.
const std::vector<std::string>& proc_paths_made_read_only();

}  // namespace codexd::sandbox::linux_backend
