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

static void print_network_status(const v1::NetworkStatus& n) {
  std::printf("network:   default mode %s%s; proxy: %llu active, %llu allowed, %llu denied, %llu/%llu bytes up/down\n",
              n.default_mode().c_str(), n.limited() ? " (limited: GET/HEAD/OPTIONS)" : "",
              static_cast<unsigned long long>(n.active_connections()), static_cast<unsigned long long>(n.allowed_total()),
              static_cast<unsigned long long>(n.denied_total()), static_cast<unsigned long long>(n.bytes_up()),
              static_cast<unsigned long long>(n.bytes_down()));
  std::string allow, deny;
  for (const auto& a : n.allow()) allow += " " + a;
  for (const auto& d : n.deny()) deny += " " + d;
  std::printf("  allow:%s\n  deny:%s\n", allow.empty() ? " (none)" : allow.c_str(), deny.empty() ? " (none)" : deny.c_str());
  std::printf("  proxy mode here: %s\n", n.enforcement().c_str());
  for (const auto& w : n.warnings()) std::printf("  WARNING: %s\n", w.c_str());
}

static void print_private_tmp_status(const v1::PrivateTmpStatus& t) {
  if (!t.enabled()) {
    std::printf("/tmp:      host /tmp (sandbox.private_tmp = false)\n");
    return;
  }
  std::printf("/tmp:      private per agent under %s, removed %us after an agent's last command\n", t.base().c_str(),
              t.grace_ms() / 1000);
  for (const auto& d : t.dirs()) {
    std::string when = d.removal_in_ms() < 0 ? std::to_string(d.commands()) + " running"
                                             : "removal in " + std::to_string(d.removal_in_ms() / 1000) + "s";
    std::printf("  uid %u agent %s: %s (%s)\n", d.uid(), d.agent_id().empty() ? "\"\"" : d.agent_id().c_str(),
                d.path().c_str(), when.c_str());
  }
}

int run_status(const ClientOptions& options) {
  v1::GetStatusResponse s;
  auto status = call_unary<v1::Admin>(options, &v1::Admin::Stub::GetStatus, v1::GetStatusRequest(), &s);
  if (!status.ok()) return report_rpc_error(status, options);
  if (options.json) {
    print_json(s);
    return 0;
  }
  std::printf("codexd %s (%s mode), pid %d, up %.0fs\n", s.version().c_str(), s.mode().c_str(), s.pid(), s.uptime_seconds());
  std::printf("socket:    %s\n", s.socket_path().c_str());
  if (!s.config_path().empty()) std::printf("config:    %s\n", s.config_path().c_str());
  std::printf("sessions:  %u live, %u started\n", s.sessions_live(), s.sessions_total());
  if (s.adoption().adopted() > 0 || s.adoption().lost_size() > 0) {
    std::printf("  adopted at start: %u\n", s.adoption().adopted());
    for (const auto& lost : s.adoption().lost()) std::printf("  lost at start: %s\n", lost.c_str());
  }
  std::printf("approvals: %u pending\n", s.approvals_pending());
  if (!s.approvals_state_error().empty()) std::printf("  not saved: %s\n", s.approvals_state_error().c_str());
  const auto& p = s.policy();
  std::printf("policy:    %u rules, approval policy %s\n", p.rule_count(), p.approval_policy().c_str());
  for (const auto& warning : p.warnings()) std::printf("  WARNING: %s\n", warning.c_str());
  for (const auto& f : p.files()) {
    if (f.loaded()) {
      std::printf("  ok     %s (%u rule%s)\n", f.path().c_str(), f.rule_count(), f.rule_count() == 1 ? "" : "s");
    } else {
      std::printf("  FAILED %s\n", f.path().c_str());
    }
    if (!f.error().empty()) std::printf("         %s\n", f.error().c_str());
  }
  if (!p.last_error().empty()) std::printf("  last reload failed; previous policy in force:\n  %s\n", p.last_error().c_str());
  const auto& sb = s.sandbox();
  std::printf("sandbox:   %s (default mode %s), bwrap %s %s, userns %s, landlock ABI %d, seccomp %s\n",
              sb.chosen_backend().c_str(), sb.default_mode().c_str(), sb.bwrap_path().c_str(), sb.bwrap_version().c_str(),
              sb.user_namespaces_usable() ? "yes" : "no", sb.landlock_abi(), sb.seccomp_available() ? "yes" : "no");
  std::printf("execs:     supervision %s (%s)\n", sb.exec_supervision().empty() ? "off" : sb.exec_supervision().c_str(),
              sb.exec_supervision_available() ? "available here: seccomp user notification" : "not available here");
  for (const auto& w : sb.warnings()) std::printf("  warning: %s\n", w.c_str());
  print_network_status(s.network());
  print_private_tmp_status(s.private_tmp());
  const auto& l = s.limits();
  std::printf("limits:    %s (%s)%s\n", l.mechanism().c_str(), l.reason().c_str(),
              l.root().empty() ? "" : (", groups under " + l.root()).c_str());
  for (const auto& w : l.warnings()) std::printf("  warning: %s\n", w.c_str());
  std::printf("you:       uid %u%s\n", s.caller_uid(), s.caller_is_admin() ? " (admin)" : "");
  return 0;
}

int run_reload(const ClientOptions& options) {
  v1::ReloadPolicyResponse r;
  auto status = call_unary<v1::Admin>(options, &v1::Admin::Stub::ReloadPolicy, v1::ReloadPolicyRequest(), &r);
  if (!status.ok()) return report_rpc_error(status, options);
  if (options.json) {
    print_json(r);
  } else if (r.ok()) {
    std::printf("policy reloaded: %u rules\n", r.policy().rule_count());
  } else {
    for (const auto& e : r.errors()) std::fprintf(stderr, "%s\n", e.c_str());
    std::fprintf(stderr, "codexctl: reload failed; the previous policy stays in force\n");
  }
  return r.ok() ? 0 : 1;
}

int run_approvals_list(const ClientOptions& options) {
  // Every page, merged into one list.
  v1::ListApprovalsResponse r;
  v1::ListApprovalsRequest request;
  do {
    v1::ListApprovalsResponse page;
    auto status = call_unary<v1::Approvals>(options, &v1::Approvals::Stub::ListApprovals, request, &page);
    if (!status.ok()) return report_rpc_error(status, options);
    for (auto& a : *page.mutable_approvals()) *r.add_approvals() = std::move(a);
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  if (options.json) {
    print_json(r);
    return 0;
  }
  if (r.approvals().empty()) std::printf("no pending approvals\n");
  for (const auto& a : r.approvals()) std::printf("%s\n", describe_approval(a).c_str());
  return 0;
}

int run_resolve(const ClientOptions& options, const std::string& approval_id, int decision, const std::string& rationale) {
  v1::ResolveApprovalRequest request;
  request.set_approval_id(approval_id);
  request.set_decision(static_cast<v1::ReviewDecision>(decision));
  request.set_rationale(rationale);
  v1::ResolveApprovalResponse response;
  auto status = call_unary<v1::Approvals>(options, &v1::Approvals::Stub::ResolveApproval, request, &response);
  if (!status.ok()) return report_rpc_error(status, options);
  // What was resolved and how (the request as sent, which the daemon accepted whole).
  if (options.json) print_json(request);
  else std::printf("%s: %s\n", approval_id.c_str(), v1::ReviewDecision_Name(request.decision()).c_str());
  return 0;
}

namespace {

// What the event reader and the prompting loop of `approvals watch` share (under `mutex`).
struct ApprovalWatch {
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<v1::ApprovalRequest> queue;
  std::string prompting;  // approval id currently on screen
  bool stream_ended = false;
  grpc::Status final_status;
  int wake[2] = {-1, -1};  // written when the request on screen is resolved elsewhere
};

// The reader thread: prints (JSON, or text when nobody is asked) and queues each event until
// the stream ends.
void read_approval_events(ApprovalWatch& watch, v1::Approvals::Stub& stub, grpc::ClientContext& context,
                          const ClientOptions& options, bool interactive) {
  auto reader = stub.WatchApprovals(&context, v1::WatchApprovalsRequest());
  v1::ApprovalEvent event;
  while (reader->Read(&event)) {
    if (options.json) {
      print_json(event);
      std::fflush(stdout);
      continue;
    }
    std::lock_guard lock(watch.mutex);
    if (event.has_added()) {
      if (!interactive) std::printf("%s\n", describe_approval(event.added()).c_str());
      watch.queue.push_back(event.added());
    } else if (event.has_resolved()) {
      const auto& id = event.resolved().approval_id();
      if (!interactive) {
        std::printf("%s resolved: %s (%s)\n", id.c_str(), v1::ReviewDecision_Name(event.resolved().decision()).c_str(),
                    event.resolved().resolution_source().c_str());
      }
      std::erase_if(watch.queue, [&](const v1::ApprovalRequest& r) { return r.approval_id() == id; });
      if (watch.prompting == id) (void)!::write(watch.wake[1], "x", 1);
    } else if (event.has_synced() && !interactive) {
      std::printf("-- watching for approval requests --\n");
    }
    std::fflush(stdout);
    watch.cv.notify_all();
  }
  std::lock_guard lock(watch.mutex);
  watch.final_status = reader->Finish();
  watch.stream_ended = true;
  watch.cv.notify_all();
}

// The next request to ask about, now marked as on screen; nullopt once the stream has ended
// and nothing is queued.
std::optional<v1::ApprovalRequest> next_to_ask(ApprovalWatch& watch) {
  std::unique_lock lock(watch.mutex);
  watch.cv.wait(lock, [&] { return watch.stream_ended || !watch.queue.empty(); });
  if (watch.queue.empty()) return std::nullopt;
  v1::ApprovalRequest current = watch.queue.front();
  watch.queue.pop_front();
  watch.prompting = current.approval_id();
  char drain[16];
  while (::read(watch.wake[0], drain, sizeof drain) > 0) {
  }
  return current;
}

// Asks on the terminal about each request in arrival order and sends the answers.
void answer_on_terminal(ApprovalWatch& watch, v1::Approvals::Stub& resolve_stub, const ClientOptions& options,
                        int tty_fd) {
  std::fprintf(stderr, "watching approvals (Ctrl-C to stop)\n");
  while (auto current = next_to_ask(watch)) {
    auto decision = ask_on_terminal(*current, tty_fd, watch.wake[0]);
    {
      std::lock_guard lock(watch.mutex);
      watch.prompting.clear();
    }
    if (decision) send_terminal_answer(resolve_stub, options, current->approval_id(), *decision);
  }
}

}  // namespace

// A live list a human answers from: each new request is shown and asked about in arrival
// order; one resolved elsewhere is dropped (or its prompt interrupted).
int run_approvals_watch(const ClientOptions& options) {
  auto channel = connect(options);
  auto stub = v1::Approvals::NewStub(channel);
  const bool interactive = !options.json && ::isatty(STDIN_FILENO);
  int tty_fd = interactive ? ::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY) : -1;
  ApprovalWatch watch;
  if (::pipe2(watch.wake, O_CLOEXEC | O_NONBLOCK) != 0) return kExitRpcError;
  grpc::ClientContext context;
  prepare(context, options);

  std::thread reader_thread([&] { read_approval_events(watch, *stub, context, options, interactive); });
  if (interactive && tty_fd >= 0) {
    auto resolve_stub = v1::Approvals::NewStub(channel);
    answer_on_terminal(watch, *resolve_stub, options, tty_fd);
  }
  reader_thread.join();
  if (tty_fd >= 0) ::close(tty_fd);
  const grpc::Status& final_status = watch.final_status;
  if (!final_status.ok() && final_status.error_code() != grpc::StatusCode::CANCELLED) return report_rpc_error(final_status, options);
  return 0;
}

int run_sandbox(const ClientOptions& options, const SandboxArgs& args) {
  v1::SandboxRunRequest request;
  for (const auto& a : args.argv) request.add_argv(a);
  std::error_code ec;
  request.set_workdir(args.workdir.empty() ? std::filesystem::current_path(ec).string() : args.workdir);
  request.set_mode(args.mode);
  for (const auto& w : args.writable) request.add_writable_roots(std::filesystem::absolute(w, ec).string());
  request.set_network_access(args.network);
  request.set_network_mode(args.network_mode);
  for (const auto& d : args.deny_read) request.add_denied_read(std::filesystem::absolute(d, ec).string());
  request.set_plan_only(args.plan_only);
  request.set_backend(args.backend);
  if (args.timeout_ms) request.set_timeout_ms(*args.timeout_ms);
  v1::RunCommandResponse r;
  auto status = call_unary<v1::Sandbox>(options, &v1::Sandbox::Stub::RunSandboxed, request, &r);
  if (!status.ok()) return report_rpc_error(status, options);
  if (options.json) {
    print_json(r);
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
  v1::CheckPolicyRequest request;
  for (const auto& a : command) request.add_argv(a);
  request.set_resolve_host_executables(resolve_host_executables);
  std::error_code ec;
  request.set_workdir(std::filesystem::current_path(ec).string());
  v1::CheckPolicyResponse r;
  auto status = call_unary<v1::Policy>(options, &v1::Policy::Stub::CheckPolicy, request, &r);
  if (!status.ok()) return report_rpc_error(status, options);
  if (options.json) {
    print_json(r);
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
