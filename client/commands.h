// codexctl subcommands. Each returns the process exit code.
#pragma once

#include <google/protobuf/message.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "client/connection.h"
#include "codexd/v1/common.pb.h"

namespace codexd::client {

struct ExecArgs {
  std::vector<std::string> argv;
  std::string shell_script;  // --shell
  std::string workdir;
  bool tty = false;
  bool detach = false;
  std::optional<uint32_t> yield_ms;
  bool escalate = false;
  std::string justification;
  std::vector<std::string> env;  // NAME=VALUE
  bool dry_run = false;
  bool no_prompt = false;        // never answer approvals inline
  std::optional<uint32_t> max_output_tokens;
};
int run_exec(const ClientOptions& options, const ExecArgs& args);

int run_sessions(const ClientOptions& options, bool all_users, bool no_trunc = false);
// Live sessions by CPU use (since the previous refresh) and memory, refreshed every
// `interval_ms`, like `docker stats`; `iterations` 0 = until interrupted.
int run_top(const ClientOptions& options, bool all_users, uint32_t interval_ms, uint32_t iterations);

// The usage columns of `codexctl sessions` and `codexctl top` ("-" when not measured).
struct UsageColumns {
  std::string memory, cpu, processes;
};
UsageColumns usage_columns(const v1::ResourceUsage& usage);
std::string format_size(uint64_t bytes);
int run_attach(const ClientOptions& options, int session_id, std::optional<uint64_t> from_offset, bool lossy);
int run_write(const ClientOptions& options, int session_id, const std::string& text, bool escapes, std::optional<uint32_t> yield_ms);
// --from-offset: re-read the stream from that offset (Poll.from_offset).
int run_poll(const ClientOptions& options, int session_id, uint32_t yield_ms, std::optional<uint64_t> from_offset);
int run_kill(const ClientOptions& options, int session_id, const std::string& signal, std::optional<uint32_t> grace_ms);
// A supervised session's execs, each under its parent's (Exec.GetTrace); --json: the response.
int run_trace(const ClientOptions& options, int session_id);
int run_status(const ClientOptions& options);
int run_reload(const ClientOptions& options);
// Restart the daemon in place keeping its sessions, and wait up to `timeout_ms` for the new
// one to answer. Exit 0 when every kept session was adopted.
int run_daemon_restart(const ClientOptions& options, uint32_t timeout_ms);

int run_approvals_list(const ClientOptions& options);
// Whether a full-screen view can run here: stdin and stdout are terminals, and TERM is set and
// not "dumb".
bool can_show_full_screen();
// The live approvals view (client/approvals_view.cc); `desktop_notifications`: run notify-send
// for each new request where it can.
int run_approvals_view(const ClientOptions& options, bool desktop_notifications);
int run_approvals_watch(const ClientOptions& options);
int run_resolve(const ClientOptions& options, const std::string& approval_id, int decision, const std::string& rationale);

struct SandboxArgs {
  std::vector<std::string> argv;
  std::string mode = "workspace-write";
  std::vector<std::string> writable;
  bool network = false;
  std::string network_mode;  // "" | off | proxy | host
  std::vector<std::string> deny_read;
  bool plan_only = false;
  std::string backend;
  std::string workdir;
  std::optional<uint32_t> timeout_ms;
};
int run_sandbox(const ClientOptions& options, const SandboxArgs& args);

int run_daemon_policy_check(const ClientOptions& options, const std::vector<std::string>& command, bool pretty,
                            bool resolve_host_executables);

// Backslash escapes (\n \r \t \\ \xHH \e) for `codexctl write -e`.
std::string unescape(const std::string& text);
// A protobuf message as JSON (one line).
std::string to_json(const google::protobuf::Message& message);
// Prints to_json(message) and a newline on stdout.
void print_json(const google::protobuf::Message& message);

}  // namespace codexd::client
