// codexctl: the command-line client of codexd. `codexctl --help` lists everything.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <variant>

#include "client/commands.h"
#include "client/completion.h"
#include "client/connection.h"
#include "client/mcp/mcp_server.h"
#include "client/policy_check/policy_check.h"
#include "codexd/api_constants.h"
#include "codexd/v1/approvals.pb.h"

#ifndef CODEXD_VERSION
#define CODEXD_VERSION "0.0.0"
#endif

using namespace codexd::client;

namespace {

ClientOptions options_from_env() {
  ClientOptions options;
  const char* socket = std::getenv("CODEXD_SOCKET");
  options.socket = socket && *socket ? socket : codexd::api::default_user_socket_path();
  const char* agent = std::getenv("CODEXD_AGENT_ID");
  options.agent_id = agent && *agent ? agent : "codexctl";
  return options;
}

// `policy check` keeps Codex's own argument rules (its corpus depends on them), so it is
// parsed by hand before CLI11 sees anything. Global options may come before it.
std::optional<int> maybe_policy_check(std::vector<std::string> args, ClientOptions options) {
  size_t i = 0;
  while (i + 1 < args.size() && (args[i] == "--socket" || args[i] == "--agent-id" || args[i] == "--json")) {
    if (args[i] == "--json") {
      options.json = true;
      i += 1;
    } else {
      (args[i] == "--socket" ? options.socket : options.agent_id) = args[i + 1];
      i += 2;
    }
  }
  if (args.size() < i + 2 || args[i] != "policy" || args[i + 1] != "check") return std::nullopt;
  auto parsed = parse_policy_check_args({args.begin() + static_cast<std::ptrdiff_t>(i + 2), args.end()});
  if (auto* code = std::get_if<int>(&parsed)) return *code;
  const auto& check = std::get<PolicyCheckArgs>(parsed);
  if (!check.rules.empty()) return run_offline_policy_check(check);
  return run_daemon_policy_check(options, check.command, check.pretty, check.resolve_host_executables);
}

// Edit distance (insertions, deletions, substitutions), for "did you mean".
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The first word after the global options, when it names no subcommand: CLI11 alone would say
// "A subcommand is required". Says which word, and the closest command if one is close.
std::optional<int> reject_unknown_subcommand(CLI::App& app, const std::vector<std::string>& args) {
  size_t i = 0;
  while (i < args.size()) {
    const std::string& word = args[i];
    if (word == "--socket" || word == "--agent-id") {
      i += 2;
    } else if (!word.empty() && word[0] == '-') {
      ++i;  // --json, --socket=..., --help, --version, or a mistake CLI11 reports itself
    } else {
      break;
    }
  }
  if (i >= args.size()) return std::nullopt;
  const std::string& word = args[i];
  std::string closest;
  size_t best = 3;  // at most two edits away
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_name() == word) return std::nullopt;
    const size_t d = edit_distance(word, sub->get_name());
    if (d < best || (sub->get_name().rfind(word, 0) == 0 && closest.empty())) {
      best = std::min(d, best);
      closest = sub->get_name();
    }
  }
  std::fprintf(stderr, "codexctl: unknown command \"%s\"%s (codexctl --help lists them)\n", word.c_str(),
               closest.empty() ? "" : ("; did you mean \"" + closest + "\"?").c_str());
  return kExitUsage;
}

int run(int argc, char** argv) {
  ClientOptions options = options_from_env();
  if (auto code = maybe_policy_check({argv + 1, argv + argc}, options)) return *code;

  CLI::App app{"codexctl: talk to codexd (run commands, watch sessions, answer approvals)"};
  app.require_subcommand(1);
  app.fallthrough();
  app.set_version_flag("--version", std::string("codexctl ") + CODEXD_VERSION);
  app.add_option("--socket", options.socket,
                 "codexd socket: PATH or unix:PATH (default: $CODEXD_SOCKET or the user-mode path)");
  app.add_flag("--json", options.json, "Machine-readable output (one JSON document per result)");
  app.add_option("--agent-id", options.agent_id, "Label for this client in logs and approvals (default: codexctl)");
  int result = 0;

  ExecArgs exec;
  auto* exec_cmd = app.add_subcommand("exec", "Run a command through codexd and stream its output; exits with its code");
  exec_cmd->add_flag("--tty", exec.tty, "Run on a pseudo-terminal; forwards stdin and window size (raw local terminal)");
  exec_cmd->add_flag("--detach", exec.detach, "Return once started; print the session id");
  exec_cmd->add_option("--workdir,-C", exec.workdir, "Working directory (default: current directory)");
  exec_cmd->add_option("--yield-ms", exec.yield_ms, "First wait before streaming/returning (250..30000; default 250, 10000 with --json)");
  exec_cmd->add_option("--shell", exec.shell_script, "Run this shell script ([shell, -lc, SCRIPT]) instead of argv");
  exec_cmd->add_flag("--escalate", exec.escalate, "Ask to run without the sandbox (needs approval)");
  exec_cmd->add_option("--justification", exec.justification, "Why escalation is needed (shown to the reviewer)");
  exec_cmd->add_option("--env,-e", exec.env, "NAME=VALUE for the command (repeatable)")->allow_extra_args(false);
  exec_cmd->add_flag("--dry-run", exec.dry_run, "Print the plan (policy, approval, sandbox, exact launch) without running");
  exec_cmd->add_flag("--no-prompt", exec.no_prompt, "Do not answer approval prompts here; wait for a reviewer");
  exec_cmd->add_option("--max-output-tokens", exec.max_output_tokens, "Output budget of the first result");
  exec_cmd->add_option("command", exec.argv, "The command and its arguments (after --)");
  exec_cmd->callback([&] {
    if (exec.argv.empty() == exec.shell_script.empty()) {
      throw CLI::ValidationError("exec", "give a command after -- or --shell SCRIPT (exactly one)");
    }
    result = run_exec(options, exec);
  });

  bool all_users = false;
  bool no_trunc = false;
  auto* sessions_cmd = app.add_subcommand("sessions", "List your sessions");
  sessions_cmd->add_flag("--all", all_users, "Every user's sessions (admin only)");
  sessions_cmd->add_flag("--no-trunc", no_trunc, "Print agent labels and commands whole (else cut with an ellipsis)");
  sessions_cmd->callback([&] { result = run_sessions(options, all_users, no_trunc); });

  uint32_t top_interval_ms = 2000;
  uint32_t top_iterations = 0;
  auto* top_cmd = app.add_subcommand("top", "Live sessions by CPU and memory, refreshed");
  top_cmd->add_flag("--all", all_users, "Every user's sessions (admin only)");
  top_cmd->add_option("--interval-ms", top_interval_ms, "Refresh period (default 2000)")->check(CLI::Range(100u, 3'600'000u));
  top_cmd->add_option("-n,--iterations", top_iterations, "Refreshes before exiting (default: until interrupted)");
  top_cmd->callback([&] { result = run_top(options, all_users, top_interval_ms, top_iterations); });

  int session_id = 0;
  std::optional<uint64_t> from_offset;
  bool lossy = false;
  auto* attach_cmd = app.add_subcommand("attach", "Stream a session's output (and stdin for TTY sessions) until it exits");
  attach_cmd->add_option("id", session_id, "Session id")->required();
  attach_cmd->add_option("--from", from_offset, "Stream offset to replay from (default: oldest retained byte)");
  attach_cmd->add_flag("--lossy", lossy, "Skip ahead instead of slowing the command when this terminal falls behind");
  attach_cmd->callback([&] { result = run_attach(options, session_id, from_offset, lossy); });

  std::string text;
  bool escapes = false;
  std::optional<uint32_t> yield_ms;
  auto* write_cmd = app.add_subcommand("write", "Write TEXT to a session's stdin and print what it answers");
  write_cmd->add_option("id", session_id, "Session id")->required();
  write_cmd->add_option("text", text, "Text to write (empty: just poll)")->required();
  write_cmd->add_flag("-e", escapes, "Interpret backslash escapes (\\n, \\r, \\t, \\xHH, \\e)");
  write_cmd->add_option("--yield-ms", yield_ms, "How long to collect output afterwards");
  write_cmd->callback([&] { result = run_write(options, session_id, text, escapes, yield_ms); });

  uint32_t poll_yield = 0;
  auto* poll_cmd = app.add_subcommand("poll", "Print new output of a session (waits up to --yield-ms for some)");
  poll_cmd->add_option("id", session_id, "Session id")->required();
  poll_cmd->add_option("--yield-ms", poll_yield, "Wait this long for output or exit (default 0)");
  std::optional<uint64_t> poll_from;
  poll_cmd->add_option("--from-offset", poll_from,
                       "Re-read the output from this stream offset (e.g. after a lost answer); prints the next offset");
  poll_cmd->callback([&] { result = run_poll(options, session_id, poll_yield, poll_from); });

  std::string signal = "term";
  std::optional<uint32_t> grace_ms;
  auto* kill_cmd = app.add_subcommand("kill", "Signal a session's process group");
  kill_cmd->add_option("id", session_id, "Session id")->required();
  kill_cmd->add_option("--signal,-s", signal, "int (SIGINT), term (SIGTERM then SIGKILL), kill (SIGKILL)")
      ->check(CLI::IsMember({"int", "term", "kill"}));
  kill_cmd->add_option("--grace-ms", grace_ms, "For term: delay before SIGKILL (default 2000)");
  kill_cmd->callback([&] { result = run_kill(options, session_id, signal, grace_ms); });

  auto* trace_cmd = app.add_subcommand(
      "trace", "Every program a supervised session started, under its parent, with the rules' verdict ([exec] exec_supervision)");
  trace_cmd->add_option("id", session_id, "Session id")->required();
  trace_cmd->callback([&] { result = run_trace(options, session_id); });

  app.add_subcommand("mcp", "Serve the Model Context Protocol on stdin/stdout (exec_command, write_stdin, list_sessions, kill_session) for an agent")
      ->callback([&] { result = codexd::client::mcp::serve_stdio(options); });
  app.add_subcommand("status", "Show the daemon's status (policy, sandbox, sessions)")->callback([&] { result = run_status(options); });
  app.add_subcommand("reload", "Reload the rules files (all or nothing)")->callback([&] { result = run_reload(options); });

  auto* daemon_cmd = app.add_subcommand("daemon", "Control the daemon itself (admins)");
  daemon_cmd->require_subcommand(1);
  uint32_t restart_timeout_ms = 30000;
  auto* restart_cmd = daemon_cmd->add_subcommand(
      "restart", "Restart codexd in place with the binary and config on disk, keeping every session; waits for it");
  restart_cmd->add_option("--timeout-ms", restart_timeout_ms, "How long to wait for the new daemon (default 30000)");
  restart_cmd->callback([&] { result = run_daemon_restart(options, restart_timeout_ms); });

  bool no_view = false, no_notify = false;
  auto* approvals_cmd = app.add_subcommand(
      "approvals", "Pending approvals: on a terminal a live full-screen view to answer them, else the list");
  approvals_cmd->add_flag("--no-tui", no_view, "Print the list (as `approvals list`) even on a terminal");
  approvals_cmd->add_flag("--no-notify", no_notify, "In the view: no desktop notification (notify-send) for a new request");
  approvals_cmd->add_subcommand("list", "List pending approvals")->callback([&] { result = run_approvals_list(options); });
  approvals_cmd->add_subcommand("watch", "Live list; answer each request on this terminal, one line at a time")
      ->callback([&] { result = run_approvals_watch(options); });
  approvals_cmd->callback([&] {
    if (!approvals_cmd->get_subcommands().empty()) return;
    const bool view = !no_view && !options.json && can_show_full_screen();
    result = view ? run_approvals_view(options, !no_notify) : run_approvals_list(options);
  });

  std::string approval_id, rationale;
  bool for_session = false, abort_turn = false, remember = false;
  auto* approve_cmd = app.add_subcommand("approve", "Approve a pending request");
  approve_cmd->add_option("id", approval_id, "Approval id")->required();
  approve_cmd->add_flag("--for-session", for_session, "Do not ask again for the same command (this uid and agent)");
  approve_cmd->add_flag("--remember", remember, "Also append the proposed prefix as an allow rule to the rules (amend)");
  approve_cmd->callback([&] {
    if (for_session && remember) throw CLI::ValidationError("approve", "--for-session and --remember exclude each other");
    auto decision = remember ? codexd::v1::APPROVED_EXECPOLICY_AMENDMENT
                    : for_session ? codexd::v1::APPROVED_FOR_SESSION
                                  : codexd::v1::APPROVED;
    result = run_resolve(options, approval_id, decision, "");
  });
  auto* deny_cmd = app.add_subcommand("deny", "Deny a pending request");
  deny_cmd->add_option("id", approval_id, "Approval id")->required();
  deny_cmd->add_flag("--abort", abort_turn, "Abort instead of deny (tell the agent to stop)");
  deny_cmd->add_option("--reason", rationale, "Shown to the agent");
  deny_cmd->callback([&] {
    result = run_resolve(options, approval_id, abort_turn ? codexd::v1::ABORT : codexd::v1::DENIED, rationale);
  });

  SandboxArgs sandbox;
  auto* sandbox_cmd = app.add_subcommand("sandbox", "Run a command through the daemon's sandbox only (no policy), like `codex sandbox`");
  sandbox_cmd->add_option("--mode", sandbox.mode, "read-only or workspace-write")->check(CLI::IsMember({"read-only", "workspace-write"}));
  sandbox_cmd->add_option("--writable", sandbox.writable, "Extra writable root (repeatable)")->allow_extra_args(false);
  sandbox_cmd->add_flag("--network", sandbox.network,
                        "Network through codexd's filtering proxy (network mode proxy)");
  sandbox_cmd->add_option("--network-mode", sandbox.network_mode,
                          "off | proxy | host (host shares the host's network namespace: dangerous)")
      ->check(CLI::IsMember({"off", "proxy", "host"}));
  sandbox_cmd->add_option("--deny-read", sandbox.deny_read, "Path the command must not read (repeatable)")->allow_extra_args(false);
  sandbox_cmd->add_flag("--plan", sandbox.plan_only, "Print the exact launch (argv and rules) without running");
  sandbox_cmd->add_option("--backend", sandbox.backend, "auto, bwrap or landlock")->check(CLI::IsMember({"auto", "bwrap", "landlock"}));
  sandbox_cmd->add_option("--workdir,-C", sandbox.workdir, "Working directory (default: current directory)");
  sandbox_cmd->add_option("--timeout-ms", sandbox.timeout_ms, "Kill after this long (default 10000)");
  sandbox_cmd->add_option("command", sandbox.argv, "The command (after --)")->required();
  sandbox_cmd->callback([&] { result = run_sandbox(options, sandbox); });

  app.add_subcommand("policy", "policy check [--rules FILE]... [--resolve-host-executables] [--pretty] -- CMD...")
      ->callback([&] {
        std::fprintf(stderr, "usage: codexctl policy check [--rules FILE]... [--resolve-host-executables] [--pretty] -- CMD...\n");
        result = kExitUsage;
      });

  std::string completion_shell;
  auto* completion_cmd =
      app.add_subcommand("completion", "Print a shell completion script (bash, zsh or fish): source <(codexctl completion bash)");
  completion_cmd->add_option("shell", completion_shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  completion_cmd->callback([&] { std::fputs(completion_script(completion_tree(app), completion_shell).c_str(), stdout); });

  if (auto code = reject_unknown_subcommand(app, {argv + 1, argv + argc})) return *code;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) { exit_process(run(argc, argv)); }
