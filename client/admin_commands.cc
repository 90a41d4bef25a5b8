// codexctl status / reload / approvals / sandbox / policy check (daemon mode).
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <deque>
#include <filesystem>
#include <mutex>
#include <condition_variable>
#include <thread>

#include <nlohmann/json.hpp>

#include "client/commands.h"
#include "client/review_prompt.h"
#include "codexd/v1/admin.grpc.pb.h"
#include "codexd/v1/approvals.grpc.pb.h"
#include "codexd/v1/policy.grpc.pb.h"
#include "codexd/v1/sandbox.grpc.pb.h"

namespace codexd::client {

int run_status(const ClientOptions& options) {
  auto stub = v1::Admin::NewStub(connect(options));
  grpc::ClientContext context;
  prepare(context, options);
  v1::GetStatusResponse s;
  auto status = stub->GetStatus(&context, v1::GetStatusRequest(), &s);
  if (!status.ok()) return report_rpc_error(status, options);
  if (options.json) {
    std::printf("%s\n", to_json(s).c_str());
    return 0;
  }
  std::printf("codexd %s (%s mode), pid %d, up %.0fs\n", s.version().c_str(), s.mode().c_str(), s.pid(), s.uptime_seconds());
  std::printf("socket:    %s\n", s.socket_path().c_str());
  if (!s.config_path().empty()) std::printf("config:    %s\n", s.config_path().c_str());
  std::printf("sessions:  %u live, %u started\n", s.sessions_live(), s.sessions_total());
  std::printf("approvals: %u pending\n", s.approvals_pending());
  const auto& p = s.policy();
  std::printf("policy:    %u rules, approval policy %s\n", p.rule_count(), p.approval_policy().c_str());
  for (const auto& f : p.files()) {
    std::printf("  %s %s\n", f.loaded() ? "ok    " : "FAILED", f.path().c_str());
    if (!f.error().empty()) std::printf("         %s\n", f.error().c_str());
  }
  if (!p.last_error().empty()) std::printf("  last reload failed; previous policy in force:\n  %s\n", p.last_error().c_str());
  const auto& sb = s.sandbox();
  std::printf("sandbox:   %s (default mode %s), bwrap %s %s, userns %s, landlock ABI %d, seccomp %s\n",
              sb.chosen_backend().c_str(), sb.default_mode().c_str(), sb.bwrap_path().c_str(), sb.bwrap_version().c_str(),
              sb.user_namespaces_usable() ? "yes" : "no", sb.landlock_abi(), sb.seccomp_available() ? "yes" : "no");
  for (const auto& w : sb.warnings()) std::printf("  warning: %s\n", w.c_str());
  std::printf("you:       uid %u%s\n", s.caller_uid(), s.caller_is_admin() ? " (admin)" : "");
  return 0;
}

int run_reload(const ClientOptions& options) {
  auto stub = v1::Admin::NewStub(connect(options));
  grpc::ClientContext context;
  prepare(context, options);
  v1::ReloadPolicyResponse r;
  auto status = stub->ReloadPolicy(&context, v1::ReloadPolicyRequest(), &r);
  if (!status.ok()) return report_rpc_error(status, options);
  if (options.json) {
    std::printf("%s\n", to_json(r).c_str());
  } else if (r.ok()) {
    std::printf("policy reloaded: %u rules\n", r.policy().rule_count());
  } else {
    for (const auto& e : r.errors()) std::fprintf(stderr, "%s\n", e.c_str());
    std::fprintf(stderr, "codexctl: reload failed; the previous policy stays in force\n");
  }
  return r.ok() ? 0 : 1;
}

int run_approvals_list(const ClientOptions& options) {
  auto stub = v1::Approvals::NewStub(connect(options));
  grpc::ClientContext context;
  prepare(context, options);
  v1::ListApprovalsResponse r;
  auto status = stub->ListApprovals(&context, v1::ListApprovalsRequest(), &r);
  if (!status.ok()) return report_rpc_error(status, options);
  if (options.json) {
    std::printf("%s\n", to_json(r).c_str());
    return 0;
  }
  if (r.approvals().empty()) std::printf("no pending approvals\n");
  for (const auto& a : r.approvals()) std::printf("%s\n", describe_approval(a).c_str());
  return 0;
}

int run_resolve(const ClientOptions& options, const std::string& approval_id, int decision, const std::string& rationale) {
  auto stub = v1::Approvals::NewStub(connect(options));
  grpc::ClientContext context;
  prepare(context, options);
  v1::ResolveApprovalRequest request;
  request.set_approval_id(approval_id);
  request.set_decision(static_cast<v1::ReviewDecision>(decision));
  request.set_rationale(rationale);
  v1::ResolveApprovalResponse response;
  auto status = stub->ResolveApproval(&context, request, &response);
  if (!status.ok()) return report_rpc_error(status, options);
  if (!options.json) std::printf("%s: %s\n", approval_id.c_str(), v1::ReviewDecision_Name(request.decision()).c_str());
  return 0;
}

// A live list a human answers from: each new request is shown and asked about in arrival
// order; one resolved elsewhere is dropped (or its prompt interrupted).
int run_approvals_watch(const ClientOptions& options) {
  auto channel = connect(options);
  auto stub = v1::Approvals::NewStub(channel);
  const bool interactive = !options.json && ::isatty(STDIN_FILENO);
  int tty_fd = interactive ? ::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY) : -1;
  int wake[2] = {-1, -1};
  if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) return kExitRpcError;

  std::mutex mutex;
  std::condition_variable cv;
  std::deque<v1::ApprovalRequest> queue;
  std::string prompting;  // approval id currently on screen
  bool stream_ended = false;
  grpc::Status final_status;
  grpc::ClientContext context;
  prepare(context, options);

  std::thread reader_thread([&] {
    auto reader = stub->WatchApprovals(&context, v1::WatchApprovalsRequest());
    v1::ApprovalEvent event;
    while (reader->Read(&event)) {
      if (options.json) {
        std::printf("%s\n", to_json(event).c_str());
        std::fflush(stdout);
        continue;
      }
      std::lock_guard lock(mutex);
      if (event.has_added()) {
        if (!interactive) std::printf("%s\n", describe_approval(event.added()).c_str());
        queue.push_back(event.added());
      } else if (event.has_resolved()) {
        const auto& id = event.resolved().approval_id();
        if (!interactive) {
          std::printf("%s resolved: %s (%s)\n", id.c_str(), v1::ReviewDecision_Name(event.resolved().decision()).c_str(),
                      event.resolved().resolution_source().c_str());
        }
        std::erase_if(queue, [&](const v1::ApprovalRequest& r) { return r.approval_id() == id; });
        if (prompting == id) (void)!::write(wake[1], "x", 1);
      } else if (event.has_synced() && !interactive) {
        std::printf("-- watching for approval requests --\n");
      }
      std::fflush(stdout);
      cv.notify_all();
    }
    std::lock_guard lock(mutex);
    final_status = reader->Finish();
    stream_ended = true;
    cv.notify_all();
  });

  if (interactive && tty_fd >= 0) {
    auto resolve_stub = v1::Approvals::NewStub(channel);
    std::fprintf(stderr, "watching approvals (Ctrl-C to stop)\n");
    for (;;) {
      v1::ApprovalRequest current;
      {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return stream_ended || !queue.empty(); });
        if (queue.empty()) break;
        current = queue.front();
        queue.pop_front();
        prompting = current.approval_id();
        char drain[16];
        while (::read(wake[0], drain, sizeof drain) > 0) {
        }
      }
      auto decision = ask_on_terminal(current, tty_fd, wake[0]);
      {
        std::lock_guard lock(mutex);
        prompting.clear();
      }
      if (!decision) continue;
      grpc::ClientContext ctx;
      prepare(ctx, options);
      v1::ResolveApprovalRequest resolve;
      resolve.set_approval_id(current.approval_id());
      resolve.set_decision(*decision);
      v1::ResolveApprovalResponse response;
      auto st = resolve_stub->ResolveApproval(&ctx, resolve, &response);
      if (!st.ok()) std::fprintf(stderr, "codexctl: %s\n", st.error_message().c_str());
    }
  }
  reader_thread.join();
  if (tty_fd >= 0) ::close(tty_fd);
  if (!final_status.ok() && final_status.error_code() != grpc::StatusCode::CANCELLED) return report_rpc_error(final_status, options);
  return 0;
}

int run_sandbox(const ClientOptions& options, const SandboxArgs& args) {
  auto stub = v1::Sandbox::NewStub(connect(options));
  grpc::ClientContext context;
  prepare(context, options);
  v1::SandboxRunRequest request;
  for (const auto& a : args.argv) request.add_argv(a);
  std::error_code ec;
  request.set_workdir(args.workdir.empty() ? std::filesystem::current_path(ec).string() : args.workdir);
  request.set_mode(args.mode);
  for (const auto& w : args.writable) request.add_writable_roots(std::filesystem::absolute(w, ec).string());
  request.set_network_access(args.network);
  for (const auto& d : args.deny_read) request.add_denied_read(std::filesystem::absolute(d, ec).string());
  request.set_plan_only(args.plan_only);
  request.set_backend(args.backend);
  if (args.timeout_ms) request.set_timeout_ms(*args.timeout_ms);
  v1::RunCommandResponse r;
  auto status = stub->RunSandboxed(&context, request, &r);
  if (!status.ok()) return report_rpc_error(status, options);
  if (options.json) {
    std::printf("%s\n", to_json(r).c_str());
    return r.has_rejection() ? kExitRejected : r.exit_code();
  }
  if (r.has_rejection()) {
    std::fprintf(stderr, "codexctl: %s\n", r.text().c_str());
    return kExitRejected;
  }
  if (args.plan_only) {
    std::printf("%s\n", r.text().c_str());
    return 0;
  }
  std::fwrite(r.stdout().data(), 1, r.stdout().size(), stdout);
  std::fwrite(r.stderr().data(), 1, r.stderr().size(), stderr);
  if (r.timed_out()) std::fprintf(stderr, "codexctl: timed out\n");
  return r.exit_code();
}

int run_daemon_policy_check(const ClientOptions& options, const std::vector<std::string>& command, bool pretty,
                            bool resolve_host_executables) {
  auto stub = v1::Policy::NewStub(connect(options));
  grpc::ClientContext context;
  prepare(context, options);
  v1::CheckPolicyRequest request;
  for (const auto& a : command) request.add_argv(a);
  request.set_resolve_host_executables(resolve_host_executables);
  std::error_code ec;
  request.set_workdir(std::filesystem::current_path(ec).string());
  v1::CheckPolicyResponse r;
  auto status = stub->CheckPolicy(&context, request, &r);
  if (!status.ok()) return report_rpc_error(status, options);
  if (options.json) {
    std::printf("%s\n", to_json(r).c_str());
    return 0;
  }
  if (pretty) std::printf("%s\n", nlohmann::ordered_json::parse(r.codex_json()).dump(2).c_str());
  else std::printf("%s\n", r.codex_json().c_str());
  const auto& req = r.requirement();
  std::string kind = v1::ApprovalRequirement::Kind_Name(req.kind());
  if (req.kind() == v1::ApprovalRequirement::SKIP) kind += req.bypass_sandbox() ? " (runs without the sandbox)" : " (runs in the sandbox)";
  std::printf("requirement: %s under %s%s\n", kind.c_str(), r.approval_policy().c_str(),
              req.reason().empty() ? "" : (": " + req.reason()).c_str());
  return 0;
}

}  // namespace codexd::client
