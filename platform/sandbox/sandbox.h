// The OS-neutral sandbox interface the orchestrator calls. Each platform backend
// (platform/linux, platform/macos, ...) implements SandboxManager; the rest of codexd only
// sees these types. Flow: SandboxPolicy (config) --resolve--> SandboxSpec (immutable,
// validated, concrete paths for one command) --SandboxManager::plan--> LaunchPlan (the exact
// argv/env to exec). Nothing here spawns a process.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace codexd::sandbox {

enum class SandboxMode { kReadOnly, kWorkspaceWrite, kDangerFullAccess };
std::string_view to_string(SandboxMode mode);               // "read-only" | "workspace-write" | "danger-full-access"
std::optional<SandboxMode> parse_sandbox_mode(std::string_view text);

enum class Backend { kNone, kLinuxBwrap, kLinuxLandlock, kMacosSeatbelt, kWindowsRestrictedToken };
std::string_view to_string(Backend backend);                // "none" | "linux-bwrap" | "linux-landlock" | ...

// Which backend to use; kAuto picks the strongest one that works on this machine.
enum class BackendPreference { kAuto, kBwrap, kLandlock };
std::string_view to_string(BackendPreference preference);  // "auto" | "bwrap" | "landlock"
std::optional<BackendPreference> parse_backend_preference(std::string_view text);

// The sandbox policy as configured (config file, or `codexctl sandbox` flags).
struct SandboxPolicy {
  SandboxMode mode = SandboxMode::kWorkspaceWrite;
  std::vector<std::string> writable_roots;  // absolute; for workspace-write, in addition to the cwd
  bool network_access = false;
  bool exclude_tmpdir_env_var = false;
  bool exclude_slash_tmp = false;
  std::vector<std::string> denied_read;     // absolute paths that the command must not read
};

// A writable root and the subpaths under it that stay read-only (.git, its real gitdir,
// .codex, .agents).
struct WritableRoot {
  std::string root;
  std::vector<std::string> read_only_subpaths;
};

// The resolved, validated sandbox for one command. Immutable once built.
struct SandboxSpec {
  SandboxMode mode = SandboxMode::kReadOnly;
  std::vector<WritableRoot> writable_roots;  // ordered by path specificity for mounting
  bool network_access = false;
  std::vector<std::string> denied_read;
  // Paths hidden from the command entirely (codexd's own socket directory).
  std::vector<std::string> masked_paths;
  // What resolution decided that is worth showing (skipped missing roots, canonicalized
  // symlinks). Informational only.
  std::vector<std::string> notes;

  bool has_full_disk_write() const { return mode == SandboxMode::kDangerFullAccess; }
  bool has_denied_reads() const { return !denied_read.empty(); }
};

// Everything needed to resolve a policy for one command.
struct ResolveContext {
  std::string cwd;                             // absolute, the command's working directory
  std::optional<std::string> tmpdir_env;       // $TMPDIR of the child environment, if set
  std::vector<std::string> masked_paths;       // e.g. the daemon's socket directory
};

// Turns a configured policy into a concrete spec (writable roots = explicit roots, cwd, /tmp,
// $TMPDIR; protected subpaths found on disk). Rejects relative paths and other bad input.
Result<SandboxSpec> resolve_sandbox_spec(const SandboxPolicy& policy, const ResolveContext& context);

// The command to wrap.
struct LaunchRequest {
  std::vector<std::string> argv;  // argv[0] may be a bare name (looked up in the child PATH)
  std::string cwd;
  std::vector<std::string> env;   // NAME=VALUE, the child's environment before sandbox markers
  // The command runs on a PTY and keeps it as its controlling terminal (job control, Ctrl-C
  // reaching the foreground job). Terminal-input injection (TIOCSTI/TIOCLINUX) stays refused
  // by the seccomp filter, which is why bwrap's --new-session is not needed then.
  bool tty = false;
};

// The exact thing to exec.
struct LaunchPlan {
  Backend backend = Backend::kNone;
  std::vector<std::string> argv;  // e.g. [bwrap, ..., --, helper, ..., --, cmd...]
  std::vector<std::string> env;   // the final environment (request env + sandbox markers)
  std::string cwd;
  // Human-readable rules that apply (mounts, seccomp rules, Landlock rules), for dry runs,
  // `codexd --print-sandbox-plan` and `codexctl sandbox --plan`.
  std::vector<std::string> rules;
};

// What this machine can do, probed once at start.
struct CapabilityReport {
  Backend chosen = Backend::kNone;
  std::string bwrap_path;
  std::string bwrap_version;
  std::vector<std::string> bwrap_flags;  // optional flags this bwrap supports
  bool user_namespaces_usable = false;
  int landlock_abi = 0;
  bool seccomp_available = false;
  std::string helper_path;
  std::vector<std::string> warnings;
  // Added by the Linux backend: whether bwrap can mount a fresh /proc (else the no-proc
  // fallback applies), whether the helper answered its self-test, and how long probing took.
  bool proc_mount_usable = false;
  bool helper_usable = false;
  int probe_millis = 0;
};

struct SandboxManagerOptions {
  BackendPreference preference = BackendPreference::kAuto;
  std::string helper_path;  // codexd-sandbox-helper; empty: next to the running executable
  // Added: where bwrap may live (absolute, trusted system paths only). Empty: the built-in
  // list (/usr/bin/bwrap, /usr/local/bin/bwrap, /bin/bwrap).
  std::vector<std::string> bwrap_candidates;
  bool no_bwrap = false;           // behave as if bwrap were not installed (tests, debugging)
  bool force_no_proc = false;      // use the no-/proc fallback even if /proc mounts (tests)
  int probe_timeout_ms = 500;      // hard bound on the whole capability probe
};

class SandboxManager {
 public:
  virtual ~SandboxManager() = default;
  virtual const CapabilityReport& capabilities() const = 0;
  // Wraps `request` in the sandbox `spec`. kDangerFullAccess returns the command unwrapped
  // (Backend::kNone). When no backend can enforce the spec, returns StatusCode::kUnavailable
  // with the reason: the caller must not run the command unsandboxed.
  virtual Result<LaunchPlan> plan(const SandboxSpec& spec, const LaunchRequest& request) const = 0;
};

// The platform's manager (probes the machine). Never null: on a platform without a backend it
// returns a manager whose plan() fails with kUnavailable for anything but danger-full-access.
std::unique_ptr<SandboxManager> create_sandbox_manager(const SandboxManagerOptions& options);
// The manager used where no backend exists (exposed so it can be tested on every platform).
std::unique_ptr<SandboxManager> create_unavailable_sandbox_manager();

// Codex's is_likely_sandbox_denied: false without a sandbox or on exit 0; true when the output
// holds one of the denial keywords; false for exit 2/126/127; true for 128+SIGSYS on Linux.
bool is_likely_sandbox_denied(Backend backend, int exit_code, std::string_view output);

}  // namespace codexd::sandbox
