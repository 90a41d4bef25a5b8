// codexd's configuration: a TOML file (--config), every key optional with a documented
// default (docs/configuration.md). Unknown keys and bad values are errors that name the key
// and its file:line:col, so a typo never silently changes behaviour.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/exec/environment.h"
#include "base/status.h"
#include "platform/limits/limits.h"
#include "platform/sandbox/sandbox.h"
#include "policies/host_pattern.h"
#include "policies/requirement.h"

namespace codexd::config {

enum class DaemonMode { kUser, kSystem };

struct DaemonSection {
  DaemonMode mode = DaemonMode::kUser;
  std::string listen;                // "unix:/path"; empty: the mode's default path
  std::string log_level = "info";    // trace | debug | info | warn | error | off
  std::string log_format = "text";   // text | json
  std::vector<uid_t> admin_uids;     // may list/act on every uid's sessions (root always may)
  std::string socket_group = "codexd";  // system mode: group that may connect (socket 0660)
  // Permission bits of the socket and its directory; 0 = the mode's default (user: 0600/0700,
  // system: 0660/0750). Widening them lets other uids connect; each uid still sees only its
  // own sessions, and a user-mode daemon runs commands only for its own uid.
  uint32_t socket_mode = 0;
  uint32_t socket_dir_mode = 0;
  // system mode: run commands of uid 0 callers as this account instead ("" = run as root).
  std::string root_runs_as;
  // A connection that has not sent the HTTP/2 client preface within this time is closed, and
  // each uid may have this many such connections at once (daemon/server/preface_gate.h).
  uint32_t preface_timeout_ms = 5000;
  uint32_t waiting_connections_per_uid = 64;
  // Established connections (past the preface) a uid that is not an admin may hold; a new one
  // past it is closed. Admins (root, the daemon's own uid, admin_uids) are not counted, so
  // they can always connect (daemon/server/guarded_relay.h).
  uint32_t max_connections_per_uid = 128;
  // What must outlive the daemon (persisted approvals, session shims' sockets and records).
  // "" = the mode's default: /var/lib/codexd (system), $XDG_STATE_HOME/codexd or
  // ~/.local/state/codexd (user). See state_dir().
  std::string state_dir;
};

enum class ExecSupervision { kOff, kAudit, kEnforce };
const char* exec_supervision_name(ExecSupervision mode);  // "off" | "audit" | "enforce"

struct ExecSection {
  std::string default_shell = "/bin/bash";
  bool allow_login_shell = true;
  uint32_t max_sessions = 64;              // per uid, pruned within the uid (Codex's 64)
  uint32_t max_sessions_per_agent = 0;     // per agent within a uid; 0: none
  uint32_t max_sessions_total = 1024;      // the whole daemon; refused past it, never pruned across users
  uint32_t background_terminal_max_timeout_ms = 300'000;
  uint64_t session_output_bytes = 1024 * 1024;  // head+tail buffer between polls
  uint64_t attach_window_bytes = 1024 * 1024;   // replay window for Attach
  // Each session's command is held by a codexd-shim that outlives the daemon, so sessions
  // survive a restart, an upgrade or a crash (Linux; elsewhere the daemon holds them).
  bool durable_sessions = true;
  // SIGTERM keeps durable sessions for the next daemon instead of ending them (SIGUSR1 and
  // --keep-sessions always keep them).
  bool keep_sessions_on_stop = false;
  std::string shim_path;  // "" = codexd-shim next to the codexd executable
  // Exec supervision (docs/sandbox.md): every program a sandboxed command starts is checked
  // against the rules (enforce), only recorded (audit), or not seen (off).
  ExecSupervision exec_supervision = ExecSupervision::kOff;
};

struct PolicySection {
  // Directories whose *.rules files are loaded, in this order (later files' rules come later;
  // host_executable: last wins). "~" means the home of the daemon's user.
  std::vector<std::string> rules_dirs;
  // Load the shipped default.rules (<prefix>/share/codexd/default.rules) before rules_dirs.
  bool include_default_rules = true;
  // untrusted | on-request | never | granular; any other word is a config error.
  policy::ApprovalPolicyKind approval_policy = policy::ApprovalPolicyKind::kOnRequest;
  // granular: which prompts may reach a reviewer (others become forbidden).
  bool granular_sandbox_approval = true;
  bool granular_rules = true;
  // Where "approve and remember" appends allow rules ("" disables amendments).
  std::string amend_file;
};

struct SandboxSection {
  sandbox::SandboxPolicy policy;  // mode, writable_roots, network (off|proxy|host), excludes, denied_read
  sandbox::BackendPreference backend = sandbox::BackendPreference::kAuto;
  std::string helper_path;        // "" = next to the codexd binary
  // workspace-write: each agent (agent id + uid) gets a private, persistent /tmp instead of
  // the host's (docs/sandbox.md "Private /tmp").
  bool private_tmp = true;
  std::string private_tmp_dir;    // "" = /var/lib/codexd/tmp (system), $XDG_STATE_HOME/codexd/tmp (user)
  uint32_t private_tmp_grace_ms = 3'600'000;  // removed this long after the agent's last command ended
};

struct ApprovalsSection {
  uint32_t timeout_ms = 0;          // 0 = wait forever
  bool reject_without_reviewer = false;  // when_no_reviewer = "reject"
  std::vector<uid_t> reviewer_uids;  // besides the requester's own uid
  std::string reviewer_group;        // members may review everyone's requests
  uint32_t session_cache_entries = 1024;  // approved-for-session entries per (uid, agent)
  uint32_t max_pending_per_uid = 32;  // pending requests of one uid at once
  uint32_t max_pending = 256;         // pending requests in all
};

// Which hosts a command in network mode proxy may reach. Strictest wins across the lists, the
// agent's own lists and the network_rule()s of the loaded rules; a host nothing names follows
// the approval policy (a network approval, or refused under "never").
struct NetworkSection {
  std::vector<policy::HostPattern> allow;
  std::vector<policy::HostPattern> deny;
  // Plain http:// requests only with GET, HEAD or OPTIONS (Codex's "limited" network).
  bool limited = false;
  // The proxy engine's limits (daemon/network ProxyOptions; docs/sandbox.md §11).
  uint32_t connect_timeout_ms = 10'000;   // name resolution + upstream connect
  uint32_t header_timeout_ms = 10'000;    // the whole request head / SOCKS5 greeting + request
  uint32_t idle_timeout_ms = 300'000;     // relay: no byte either way
  uint32_t max_header_bytes = 64 * 1024;  // request head
  uint32_t max_connections_per_command = 256;
  uint32_t max_connections_total = 4096;
};

// [limits]: how commands are limited (docs/configuration.md, docs/sandbox.md).
enum class LimitsMechanism { kAuto, kCgroup, kRlimit, kNone };

struct LimitsSection {
  LimitsMechanism mechanism = LimitsMechanism::kAuto;
  limits::ResourceLimits session;  // each command's own (pids_max, memory_max, ...)
  limits::ResourceLimits agent;    // each agent's budget, shared by its commands (agent_*)
  // The memory floor (cgroup v2 memory.min) of the daemon's own leaf where it has one.
  uint64_t daemon_memory_min = uint64_t{64} << 20;
  // User mode: when to ask the user's systemd for a delegated scope (auto: where the daemon's
  // own cgroup is not writable).
  enum class SystemdScope { kAuto, kAlways, kNever };
  SystemdScope systemd_scope = SystemdScope::kAuto;
};

struct AgentOverride {
  std::optional<policy::ApprovalPolicyKind> approval_policy;  // unset: policy.approval_policy
  std::optional<sandbox::NetworkMode> network;                // unset: sandbox.network
  std::vector<policy::HostPattern> network_allow;             // in addition to [network]
  std::vector<policy::HostPattern> network_deny;
  std::optional<bool> network_limited;                        // unset: network.limited
  std::optional<ExecSupervision> exec_supervision;            // unset: exec.exec_supervision
  limits::ResourceLimits budget;  // set fields replace limits.agent_* for this agent
};

// The optional Prometheus endpoint (docs/configuration.md [metrics]).
struct MetricsSection {
  // "" = off; "unix:/absolute/path" (a socket of mode 0600); "tcp:127.0.0.1:PORT" or
  // "tcp:[::1]:PORT" (loopback only: the figures are about every user's activity).
  std::string listen;
};

struct MetricsAddress {
  bool tcp = false;
  std::string path;  // unix
  std::string host;  // tcp: "127.0.0.1" | "::1"
  uint16_t port = 0;
};
// `listen` of [metrics] parsed, or why it is not one of the accepted forms.
Result<MetricsAddress> parse_metrics_listen(const std::string& listen);

struct AuditSection {
  std::string log_file;   // "" = no file
  bool journald = false;
};

struct Config {
  std::string source_path;  // "" when built from defaults
  DaemonSection daemon;
  ExecSection exec;
  exec::EnvironmentPolicy environment;
  PolicySection policy;
  SandboxSection sandbox;
  ApprovalsSection approvals;
  NetworkSection network;
  std::map<std::string, AgentOverride> agents;
  AuditSection audit;
  LimitsSection limits;
  MetricsSection metrics;

  // The approval policy for calls labelled `agent_id`: its [agents."<id>"] approval_policy,
  // else policy.approval_policy, with the policy's granular flags.
  policy::ApprovalPolicy approval_policy_for(const std::string& agent_id) const;
  // The network mode for calls labelled `agent_id`: its [agents."<id>"] network, else
  // sandbox.network.
  sandbox::NetworkMode network_mode_for(const std::string& agent_id) const;
  // Whether `agent_id`'s plain HTTP is limited to GET/HEAD/OPTIONS (and tunnels refused): its
  // [agents."<id>"] network_limited, else network.limited.
  bool network_limited_for(const std::string& agent_id) const;
  // Exec supervision of `agent_id`'s sandboxed commands: its [agents."<id>"] exec_supervision,
  // else exec.exec_supervision.
  ExecSupervision exec_supervision_for(const std::string& agent_id) const;
  // The budget of `agent_id`'s commands together: limits.agent_* with its [agents."<id>"] keys.
  limits::ResourceLimits agent_budget_for(const std::string& agent_id) const;
};

// Defaults for a mode (rules dirs, socket path).
Config default_config(DaemonMode mode);

// Parses TOML text. Errors: every problem found, one per line, as "path:line:col: message".
Result<Config> parse_config(const std::string& text, const std::string& source_path);
// Reads and parses a file. A missing file is an error here (the caller decides about defaults).
Result<Config> load_config_file(const std::string& path);

// The listening socket path for a config ("unix:" prefix stripped).
std::string socket_path(const Config& config);

// The daemon's state directory (daemon.state_dir, or the mode's default; user mode's home is
// the daemon user's passwd home when XDG_STATE_HOME is unset).
std::string state_dir(const Config& config);

// System mode trusts only what root alone can change: posix::check_root_owned (`path`,
// symlinks followed, and every directory above it owned by root and not writable by its group
// or others; a sticky /tmp-like directory two or more levels up is fine). The error names
// the path and why: "<path>: writable by someone other than root (owner uid N, mode 0664);
// system mode loads only files that only root can change".
Status check_root_only_writable(const std::string& path);

// "~" / "~/x" against `home`.
std::string expand_home(const std::string& path, const std::string& home);

}  // namespace codexd::config
