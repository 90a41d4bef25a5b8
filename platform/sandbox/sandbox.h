// The OS-neutral sandbox interface the orchestrator calls. Each platform backend
// (platform/linux, platform/macos, ...) implements SandboxManager's protected hooks; the rest
// of codexd only sees these types. The machine's manager comes from create_sandbox_manager()
// in platform/backends/manager_factory.h, the one place that knows every backend. Flow: SandboxPolicy (config) --resolve--> SandboxSpec (immutable,
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
#include "base/unique_fd.h"

namespace codexd::sandbox {

enum class SandboxMode { kReadOnly, kWorkspaceWrite, kDangerFullAccess };
std::string_view to_string(SandboxMode mode);               // "read-only" | "workspace-write" | "danger-full-access"
std::optional<SandboxMode> parse_sandbox_mode(std::string_view text);

// What the command's network is. kOff: a network namespace with only loopback and no socket
// families but AF_UNIX. kProxy: a namespace with only loopback, where the helper opens the
// proxy ports (HTTP and SOCKS5 on 127.0.0.1) whose listening sockets it hands to the daemon's
// filtering proxy; nothing else leaves the sandbox. kHost: the host's network namespace
// (dangerous: every loopback service and abstract socket of the host is reachable).
enum class NetworkMode { kOff, kProxy, kHost };
std::string_view to_string(NetworkMode mode);               // "off" | "proxy" | "host"
std::optional<NetworkMode> parse_network_mode(std::string_view text);

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
  NetworkMode network = NetworkMode::kOff;
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
  NetworkMode network = NetworkMode::kOff;   // danger-full-access: always kHost
  std::vector<std::string> denied_read;
  // Paths hidden from the command entirely (codexd's own socket directory).
  std::vector<std::string> masked_paths;
  // workspace-write: the agent's private, persistent /tmp on the host (made and checked by the
  // daemon). bwrap mounts it at /tmp; Landlock makes it a writable root and points $TMPDIR at
  // it. Unset: no private /tmp (host /tmp is an explicit writable root, /tmp is excluded, or
  // the caller keeps none), and bwrap gives a throw-away tmpfs when /tmp is not a root.
  std::optional<std::string> private_tmp;
  // Exec supervision (docs/sandbox.md "Exec supervision"): every exec inside waits for the
  // daemon's answer. A backend that cannot do it refuses the plan.
  bool supervise_exec = false;
  // Audit mode of exec supervision: each exec is reported and goes on without waiting.
  bool exec_audit_only = false;
  // What resolution decided that is worth showing (skipped missing roots, canonicalized
  // symlinks). Informational only.
  std::vector<std::string> notes;

  bool has_full_disk_write() const { return mode == SandboxMode::kDangerFullAccess; }
  bool has_denied_reads() const { return !denied_read.empty(); }
  bool has_network() const { return network != NetworkMode::kOff; }
};

// Everything needed to resolve a policy for one command.
struct ResolveContext {
  std::string cwd;                             // absolute, the command's working directory
  std::optional<std::string> tmpdir_env;       // $TMPDIR of the child environment, if set
  std::vector<std::string> masked_paths;       // e.g. the daemon's socket directory
  // The agent's private /tmp (absolute, already made safe by the caller). Set: in
  // workspace-write it replaces host /tmp (and a $TMPDIR inside host /tmp) unless host /tmp
  // is an explicit writable root (or the cwd); see SandboxSpec::private_tmp.
  std::optional<std::string> private_tmp;
};

// The $TMPDIR a command gets with a private /tmp: "/tmp" where the backend mounts it there,
// the host path where it cannot (Landlock). `env` with any TMPDIR replaced.
std::vector<std::string> with_private_tmpdir(std::vector<std::string> env, const std::string& tmpdir);

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
  // The path handed to execve. A confined plan: argv.front() (bwrap, the helper or
  // sandbox-exec, always absolute). plan_unconfined: argv[0] resolved against the child's
  // PATH and cwd. plan() for danger-full-access: argv.front() as given (nothing is looked up).
  std::string executable;
  // The launcher hands signals on to the command through the sandbox's init (bwrap + the
  // helper as pid 1): the session's signals must reach that init, not kill the launcher, so
  // the launcher is started with them ignored and dies only by SIGKILL.
  bool forwards_signals = false;
  // Network mode proxy or exec supervision: the launcher expects the sandbox's channel (a
  // SOCK_SEQPACKET Unix socket) as this descriptor number; over it the helper sends its one
  // handover message (sandbox_handover.h). -1: no channel.
  int channel_fd = -1;
  bool supervises_exec = false;  // the handover carries the keeper's exec relay
  // A PTY session under bwrap: the launcher expects a console socket (SOCK_SEQPACKET) as this
  // descriptor number; the helper opens a PTY in the sandbox's own /dev/pts and sends its
  // master over it, so the command's terminal is /dev/pts/N inside (not the host's terminal
  // on /dev/console). Without the socket the helper keeps the host's terminal. -1: none.
  int console_fd = -1;
  // Linux: the seccomp programs the daemon compiled for this plan's rules (a sealed memfd,
  // shared by every plan with the same rules and kept by the manager). The launcher must hand
  // it to the child as descriptor `seccomp_fd`; the helper refuses to start without it.
  // -1 / null: none.
  int seccomp_fd = -1;
  std::shared_ptr<const UniqueFd> seccomp_program;
};

// One backend-specific fact of a CapabilityReport, for display ("landlock ABI", "6").
struct CapabilityFact {
  std::string name;
  std::string value;
};

// What this machine can do, probed once at start. Only what every backend has; a backend's
// own typed details live in its own types (e.g. platform/linux/linux_capabilities.h) and
// reach this report as `facts`.
struct CapabilityReport {
  Backend chosen = Backend::kNone;
  std::vector<CapabilityFact> facts;  // in display order
  std::string helper_path;            // the in-sandbox helper, for backends that run one
  bool helper_usable = false;         // it passed its checks and answered its self-test
  bool exec_supervision = false;      // the chosen backend can supervise every exec inside
  std::vector<std::string> warnings;
  int probe_millis = 0;               // how long probing took
};

// What every backend is configured with. Options of one backend (where bwrap may live, ...)
// are that backend's own (e.g. linux_backend::LinuxSandboxOptions).
struct SandboxManagerOptions {
  BackendPreference preference = BackendPreference::kAuto;
  std::string helper_path;   // codexd-sandbox-helper; empty: next to the running executable
  int probe_timeout_ms = 500;  // hard bound on the whole capability probe
};

// Non-empty argv, a non-empty argv[0], no NUL byte in any word, an absolute cwd: what every
// plan checks first (InvalidArgument otherwise).
Status validate_launch_request(const LaunchRequest& request);

// The one launch pipeline (a template method). plan() and plan_unconfined() are the only
// entry points and are not virtual: request validation, the danger-full-access pass-through
// and the refusal when nothing can confine are written once, here. A backend supplies the
// confined plan and the PATH lookup for unconfined commands. Every method is const and
// thread-safe; none spawns a process.
class SandboxManager {
 public:
  virtual ~SandboxManager() = default;

  // What the start-up probe found; capabilities().chosen == kNone means nothing can confine.
  virtual const CapabilityReport& capabilities() const = 0;

  // Wraps `request` in the sandbox `spec`:
  //  * an invalid request (validate_launch_request): InvalidArgument;
  //  * kDangerFullAccess: the command unwrapped (backend kNone, argv/env/cwd as given,
  //    executable = argv[0] as given, rule "danger-full-access: no sandbox");
  //  * capabilities().chosen == kNone: StatusCode::kUnavailable with the probe's warnings as
  //    the reason. The caller must not run the command unsandboxed;
  //  * otherwise the backend's confined plan (executable = argv.front() of the wrapped argv),
  //    or its error (kUnavailable when this spec cannot be enforced, e.g. the helper lies
  //    inside a writable root).
  Result<LaunchPlan> plan(const SandboxSpec& spec, const LaunchRequest& request) const;

  // The command with no sandbox at all, for when the policy bypasses it (an explicit allow,
  // an approved escalation or retry) or the mode is danger-full-access: backend kNone,
  // argv/env/cwd as given, no rules, and executable = argv[0] resolved against the PATH in
  // request.env and request.cwd (as execvp would in the child). Fails with InvalidArgument
  // for an invalid request and with the lookup's error (NotFound: "command not found: x")
  // when argv[0] cannot be resolved.
  Result<LaunchPlan> plan_unconfined(const LaunchRequest& request) const;

 protected:
  // The confined plan. Called only with a valid request, a spec other than
  // danger-full-access, and capabilities().chosen != kNone. Must not fall back to an
  // unconfined plan: a spec it cannot enforce is an error (kUnavailable).
  virtual Result<LaunchPlan> plan_confined(const SandboxSpec& spec, const LaunchRequest& request) const = 0;

  // Absolute path of request.argv[0] for an unconfined exec (posix::resolve_executable for
  // the POSIX backends). Called only with a valid request.
  virtual Result<std::string> resolve_unconfined_executable(const LaunchRequest& request) const = 0;
};

// Codex's is_likely_sandbox_denied: false without a sandbox or on exit 0; true when the output
// holds one of the denial keywords; false for exit 2/126/127; true for 128+SIGSYS on Linux.
bool is_likely_sandbox_denied(Backend backend, int exit_code, std::string_view output);

}  // namespace codexd::sandbox
