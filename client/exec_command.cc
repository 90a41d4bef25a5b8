// codexctl exec: run through the daemon, stream output live, exit with the command's code.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <random>
#include <thread>

#include "client/approval_notice.h"
#include "client/commands.h"
#include "client/review_prompt.h"
#include "client/session_stream.h"
#include "codexd/v1/approvals.grpc.pb.h"
#include "codexd/v1/exec.grpc.pb.h"

namespace codexd::client {
namespace {

std::string new_call_id() {
  std::random_device rd;
  char buf[48];
  std::snprintf(buf, sizeof buf, "codexctl-%d-%08x%08x", ::getpid(), rd(), rd());
  return buf;
}

// Answers this command's own approval requests on the terminal while ExecCommand waits.
class InlineApprover {
 public:
  InlineApprover(const ClientOptions& options, std::shared_ptr<grpc::Channel> channel, std::string call_id, int tty_fd)
      : options_(options), stub_(v1::Approvals::NewStub(channel)), call_id_(std::move(call_id)), tty_fd_(tty_fd) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) == 0) {
      wake_read_ = p[0];
      wake_write_ = p[1];
    }
    prepare(context_, options_);
    thread_ = std::thread([this] { run(); });
  }
  ~InlineApprover() {
    context_.TryCancel();
    if (wake_write_ >= 0) (void)!::write(wake_write_, "x", 1);
    if (thread_.joinable()) thread_.join();
    for (int fd : {wake_read_, wake_write_}) {
      if (fd >= 0) ::close(fd);
    }
  }

 private:
  void run() {
    v1::WatchApprovalsRequest request;
    auto reader = stub_->WatchApprovals(&context_, request);
    v1::ApprovalEvent event;
    while (reader->Read(&event)) {
      if (!event.has_added() || event.added().call_id() != call_id_) continue;
      auto decision = ask_on_terminal(event.added(), tty_fd_, wake_read_);
      if (decision) send_terminal_answer(*stub_, options_, event.added().approval_id(), *decision);
    }
    reader->Finish();
  }

  const ClientOptions& options_;
  std::unique_ptr<v1::Approvals::Stub> stub_;
  std::string call_id_;
  int tty_fd_;
  int wake_read_ = -1, wake_write_ = -1;
  grpc::ClientContext context_;
  std::thread thread_;
};

// `--json exec` without --detach: the whole run, polled to its end, in one result: the first
// answer's fields, every answer's output in order (each within its own token budget), the
// token counts added up, and the exit (code, signal, termination, usage) of the last answer.
// A script then gets the exit code as codexctl's own, never a 0 for a command still running.
int follow_to_exit_as_json(const ClientOptions& options, v1::Exec::Stub& stub, v1::ExecResult result,
                           std::optional<uint32_t> max_output_tokens) {
  const int session_id = result.session_id();
  SignalForwarder signals(stub, options, session_id, false);  // Ctrl-C interrupts the command
  const auto started = std::chrono::steady_clock::now() - std::chrono::duration<double>(result.wall_time_seconds());
  while (!result.has_exit_code()) {
    v1::PollRequest request;
    request.set_session_id(session_id);
    request.set_yield_time_ms(30'000);
    if (max_output_tokens) request.set_max_output_tokens(*max_output_tokens);
    v1::ExecResult next;
    grpc::ClientContext context;
    prepare(context, options);
    grpc::Status status = stub.Poll(&context, request, &next);
    if (!status.ok()) return report_rpc_error(status, options);
    result.mutable_output()->append(next.output());
    result.set_original_token_count(result.original_token_count() + next.original_token_count());
    result.set_output_offset(next.output_offset());
    result.set_likely_sandbox_denied(result.likely_sandbox_denied() || next.likely_sandbox_denied());
    for (const auto& warning : next.warnings()) result.add_warnings(warning);
    *result.mutable_usage() = next.usage();
    if (next.has_exit_code()) {
      result.clear_session_id();
      result.set_exit_code(next.exit_code());
      if (next.has_signal()) result.set_signal(next.signal());
      result.set_termination(next.termination());
    }
  }
  result.set_wall_time_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  result.clear_text();  // the model's rendering is per answer; this object spans several
  std::printf("%s\n", to_json(result).c_str());
  return result.exit_code();
}

}  // namespace

namespace {

// The request codexctl sends for `args`; nullopt (after saying why) for a usage error.
std::optional<v1::ExecCommandRequest> build_request(const ClientOptions& options, const ExecArgs& args) {
  v1::ExecCommandRequest request;
  if (!args.shell_script.empty()) {
    request.set_cmd(args.shell_script);
  } else {
    for (const auto& a : args.argv) request.add_argv(a);
  }
  std::error_code ec;
  request.set_workdir(args.workdir.empty() ? std::filesystem::current_path(ec).string() : args.workdir);
  request.set_tty(args.tty);
  if (args.tty) {
    if (auto size = terminal_size(STDIN_FILENO)) {
      request.set_rows(size->rows);
      request.set_cols(size->cols);
    }
    // Like `docker exec -it`: the session's terminal is this one, so it gets this TERM (not the
    // agents' TERM=dumb); -e TERM=... still wins (set below).
    for (const char* name : {"TERM", "COLORTERM"}) {
      if (const char* value = std::getenv(name); value != nullptr && *value != '\0') (*request.mutable_env())[name] = value;
    }
  }
  // Stream early: a short first wait, the rest arrives through Attach (or, with --json, by
  // Poll). --detach returns after the shortest wait the daemon allows.
  request.set_yield_time_ms(args.yield_ms.value_or(options.json && !args.detach ? 10000 : 250));
  // A terminal gets everything the daemon retained (no model budget); --json keeps Codex's.
  if (args.max_output_tokens) request.set_max_output_tokens(*args.max_output_tokens);
  else if (!options.json) request.set_max_output_tokens(1'000'000);
  request.set_sandbox_permissions(args.escalate ? v1::REQUIRE_ESCALATED : v1::USE_DEFAULT);
  request.set_justification(args.justification);
  for (const auto& kv : args.env) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "codexctl: --env takes NAME=VALUE (got %s)\n", kv.c_str());
      return std::nullopt;
    }
    (*request.mutable_env())[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  request.set_call_id(new_call_id());
  request.set_dry_run(args.dry_run);
  return request;
}

// ExecCommand, with this terminal answering the call's own approvals when it can, and a
// notice of what it waits for when it cannot.
grpc::Status ask(const ClientOptions& options, const ExecArgs& args, const std::shared_ptr<grpc::Channel>& channel,
                 v1::Exec::Stub& stub, const v1::ExecCommandRequest& request, v1::ExecResult& result) {
  std::unique_ptr<InlineApprover> approver;
  std::unique_ptr<ApprovalNotice> notice;
  int tty_fd = -1;
  if (!args.no_prompt && !options.json && ::isatty(STDIN_FILENO)) {
    tty_fd = ::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (tty_fd >= 0) approver = std::make_unique<InlineApprover>(options, channel, request.call_id(), tty_fd);
  }
  grpc::ClientContext context;
  prepare(context, options);
  std::promise<grpc::Status> finished;
  std::future<grpc::Status> answered = finished.get_future();
  stub.async()->ExecCommand(&context, &request, &result, [&finished](grpc::Status s) { finished.set_value(std::move(s)); });
  // Not answered at once: the command may wait for a reviewer. Unless this terminal is the
  // reviewer, say which approval it waits for (a quick command never pays for the watch).
  if (!approver && !args.dry_run && answered.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout) {
    notice = std::make_unique<ApprovalNotice>(options, channel, request.call_id());
  }
  grpc::Status status = answered.get();
  approver.reset();
  notice.reset();
  if (tty_fd >= 0) ::close(tty_fd);
  return status;
}

// An approval lets a command be tried, never out of the sandbox: an approved `git reset --hard`
// in workspace-write still fails on the read-only .git. Say what happened and what would help.
void print_sandbox_denied_hint(const ExecArgs& args, v1::SandboxBackend sandbox) {
  std::fprintf(stderr, "codexctl: the output looks like the sandbox refused something");
  if (sandbox == v1::SANDBOX_NONE || args.escalate) {
    std::fprintf(stderr, "\n");
    return;
  }
  std::fprintf(stderr,
               ": it keeps everything outside its writable roots (and .git inside them) read-only, approved or "
               "not.\ncodexctl: if the command must write there, rerun it with --escalate: that asks a reviewer to let "
               "it run without the sandbox.\n");
}

// The first answer on a terminal: its output, or the id of a detached session; then the
// session followed to its end.
int present(const ClientOptions& options, const ExecArgs& args, const std::shared_ptr<grpc::Channel>& channel,
            const v1::ExecResult& result) {
  if (result.has_rejection()) {
    std::fprintf(stderr, "codexctl: %s\n", result.text().c_str());
    return kExitRejected;
  }
  if (args.dry_run) {
    std::printf("%s", result.text().c_str());
    return 0;
  }
  if (args.detach && result.has_session_id()) {
    // The id alone on stdout, for `id=$(codexctl exec --detach -- ...)`. What the command wrote
    // in the first wait is not printed: `codexctl attach ID` replays it.
    std::printf("%d\n", result.session_id());
    std::fflush(stdout);
    std::fprintf(stderr, "codexctl: session %d is running (codexctl attach %d)\n", result.session_id(), result.session_id());
    return 0;
  }
  // A terminal session's output carries the remote terminal's line endings (\r\n): the local
  // terminal is raw before any of it is written, or it adds a \r of its own to each line.
  // (follow_session's own RawTerminal is then a no-op; this one restores at the end.)
  std::optional<RawTerminal> raw;
  if (args.tty) raw.emplace();
  std::fwrite(result.output().data(), 1, result.output().size(), stdout);
  std::fflush(stdout);
  if (result.likely_sandbox_denied()) print_sandbox_denied_hint(args, result.sandbox());
  if (args.detach) {
    // Ended within the first wait: no session is left to detach from. Its output went to
    // stdout as for a plain exec, and its code is codexctl's.
    std::fprintf(stderr, "codexctl: the command exited with code %d within the first wait; no session was left running\n",
                 result.exit_code());
  }
  if (result.has_exit_code()) return result.exit_code();
  return follow_session(options, channel, result.session_id(), result.output_offset(), args.tty, true);
}

}  // namespace

int run_exec(const ClientOptions& options, const ExecArgs& args) {
  // SIGINT/SIGWINCH are handled by the follower's signal thread; block them before any
  // gRPC thread exists so no other thread takes them.
  block_follow_signals();
  auto channel = connect(options);
  auto stub = v1::Exec::NewStub(channel);
  std::optional<v1::ExecCommandRequest> request = build_request(options, args);
  if (!request) return kExitUsage;
  v1::ExecResult result;
  grpc::Status status = ask(options, args, channel, *stub, *request, result);
  if (!status.ok()) return report_rpc_error(status, options);
  if (!options.json) return present(options, args, channel, result);
  if (!result.has_rejection() && result.has_session_id() && !args.detach && !args.dry_run) {
    return follow_to_exit_as_json(options, *stub, std::move(result), args.max_output_tokens);
  }
  std::printf("%s\n", to_json(result).c_str());
  if (result.has_rejection()) return kExitRejected;
  return result.has_exit_code() ? result.exit_code() : 0;
}

}  // namespace codexd::client
