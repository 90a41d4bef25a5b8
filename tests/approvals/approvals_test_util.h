// Helpers for the approvals integration tests: an agent and a reviewer as two independent gRPC
// clients of one real codexd (each on its own channel, with its own x-codexd-agent-id), calls
// that block on approval run on their own thread, and a reviewer's WatchApprovals stream read
// into a queue. Every wait has a bounded hang guard; no assertion depends on timing.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "codexd/v1/approvals.grpc.pb.h"
#include "codexd/v1/exec.grpc.pb.h"
#include "codexd/v1/policy.grpc.pb.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_daemon.h"

namespace codexd::testing::approvals {

// Hang guard for anything that waits on the daemon (never an expected duration).
inline constexpr std::chrono::seconds kGuard{60};

inline bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A directory outside every writable root of the sandbox (the workspace and /tmp are writable
// roots; /var/tmp is not), removed at the end.
// The fixture base of these suites: one real daemon per test, which must start, and whose log
// (plus failure_context()) is shown when the test failed.
class DaemonTest : public ::testing::Test {
 protected:
  explicit DaemonTest(TestDaemonOptions options) : daemon_(std::move(options)) {}
  void SetUp() override { ASSERT_TRUE(daemon_.started()) << daemon_.daemon_log(); }
  void TearDown() override {
    if (HasFailure()) ADD_FAILURE() << "daemon log:\n" << daemon_.daemon_log() << failure_context();
  }
  // More to show after the daemon log when the test failed.
  virtual std::string failure_context() const { return ""; }
  // The workspace, or `name` in it.
  std::string ws(const std::string& name = "") const { return name.empty() ? daemon_.workspace() : daemon_.workspace() + "/" + name; }

  TestDaemon daemon_;
};

class OutsideDir : public TempDir {
 public:
  OutsideDir() : TempDir("codexd-apr-out", TempLocation::kOutsideTmp, 0777) {}
};

// TestDaemon writes the [sandbox] table itself and TOML cannot reopen a table, so extra
// [sandbox] keys ride on the `sandbox_mode` value: the closing quote it appends lands in a comment.
inline std::string sandbox_mode_with(const std::string& mode, const std::string& extra_lines) {
  return mode + "\"\n" + extra_lines + "\n# \"";
}

// Waits (hang guard) until a writer opened `fifo` and wrote a line, then returns the read end,
// which reports EOF once every writer (the command and its children) is gone.
inline int wait_for_start(const std::string& fifo) {
  int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kGuard).count())) != 1) {
    ::close(fd);
    return -1;
  }
  char buf[64];
  (void)!::read(fd, buf, sizeof buf);
  return fd;
}

// True once the writers of the FIFO are gone (EOF), within the hang guard.
inline bool writers_gone(int fd) {
  const auto limit = std::chrono::steady_clock::now() + kGuard;
  while (std::chrono::steady_clock::now() < limit) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 1000) < 0) return false;
    char buf[64];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) return true;
  }
  return false;
}

// Waits (hang guard) until `path` has at least `n` lines, woken by inotify on every change.
inline size_t wait_for_lines(const std::string& path, size_t n) {
  auto count = [&] {
    const std::string text = slurp(path);
    return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  };
  int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd < 0) return count();
  ::inotify_add_watch(fd, path.c_str(), IN_MODIFY | IN_CLOSE_WRITE);
  const auto limit = std::chrono::steady_clock::now() + kGuard;
  size_t lines = count();
  while (lines < n && std::chrono::steady_clock::now() < limit) {
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, 1000);
    char buf[4096];
    while (::read(fd, buf, sizeof buf) > 0) {
    }
    lines = count();
  }
  ::close(fd);
  return lines;
}

inline std::chrono::system_clock::time_point deadline() { return std::chrono::system_clock::now() + kGuard; }

// A gRPC client labelled with an agent id, on its own channel (its own connection).
class Client {
 public:
  Client(const TestDaemon& daemon, std::string agent_id)
      : agent_id_(std::move(agent_id)), channel_(daemon.channel()), exec_(v1::Exec::NewStub(channel_)),
        approvals_(v1::Approvals::NewStub(channel_)), policy_(v1::Policy::NewStub(channel_)) {}

  const std::string& agent_id() const { return agent_id_; }
  void prepare(grpc::ClientContext& ctx) const {
    TestDaemon::label(ctx, agent_id_);
    ctx.set_deadline(deadline());
  }

  grpc::Status exec(const v1::ExecCommandRequest& req, v1::ExecResult* res) const {
    grpc::ClientContext ctx;
    prepare(ctx);
    return exec_->ExecCommand(&ctx, req, res);
  }
  v1::ExecResult exec_ok(const v1::ExecCommandRequest& req) const {
    v1::ExecResult res;
    grpc::Status st = exec(req, &res);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return res;
  }
  grpc::Status run(const v1::RunCommandRequest& req, v1::RunCommandResponse* res) const {
    grpc::ClientContext ctx;
    prepare(ctx);
    return exec_->RunCommand(&ctx, req, res);
  }
  grpc::Status check(const v1::CheckPolicyRequest& req, v1::CheckPolicyResponse* res) const {
    grpc::ClientContext ctx;
    prepare(ctx);
    return policy_->CheckPolicy(&ctx, req, res);
  }
  grpc::Status resolve(const std::string& id, v1::ReviewDecision decision, const std::string& rationale = "") const {
    grpc::ClientContext ctx;
    prepare(ctx);
    v1::ResolveApprovalRequest req;
    req.set_approval_id(id);
    req.set_decision(decision);
    req.set_rationale(rationale);
    v1::ResolveApprovalResponse res;
    return approvals_->ResolveApproval(&ctx, req, &res);
  }
  std::vector<v1::ApprovalRequest> list() const {
    grpc::ClientContext ctx;
    prepare(ctx);
    v1::ListApprovalsResponse res;
    grpc::Status st = approvals_->ListApprovals(&ctx, v1::ListApprovalsRequest(), &res);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return {res.approvals().begin(), res.approvals().end()};
  }
  v1::Exec::Stub& exec_stub() const { return *exec_; }
  v1::Approvals::Stub& approvals_stub() const { return *approvals_; }

 private:
  std::string agent_id_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Exec::Stub> exec_;
  std::unique_ptr<v1::Approvals::Stub> approvals_;
  std::unique_ptr<v1::Policy::Stub> policy_;
};

// One call running on its own thread (it may wait for a reviewer). cancel() drops it like a
// client that goes away.
template <typename Request, typename Response>
class PendingCall {
 public:
  using Method = grpc::Status (v1::Exec::Stub::*)(grpc::ClientContext*, const Request&, Response*);
  PendingCall(const Client& client, Method method, Request request) : request_(std::move(request)) {
    client.prepare(ctx_);
    auto* stub = &client.exec_stub();
    thread_ = std::thread([this, stub, method] {
      status_ = (stub->*method)(&ctx_, request_, &response_);
      done_.set_value();
    });
    finished_ = done_.get_future();
  }
  ~PendingCall() {
    ctx_.TryCancel();
    thread_.join();
  }
  // Waits for the call to return (hang guard); false if it did not.
  bool wait() { return finished_.wait_for(kGuard) == std::future_status::ready; }
  bool returned() { return finished_.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }
  void cancel() { ctx_.TryCancel(); }
  const grpc::Status& status() const { return status_; }
  const Response& response() const { return response_; }

 private:
  Request request_;
  grpc::ClientContext ctx_;
  Response response_;
  grpc::Status status_;
  std::promise<void> done_;
  std::future<void> finished_;
  std::thread thread_;
};

using PendingExec = PendingCall<v1::ExecCommandRequest, v1::ExecResult>;
using PendingRun = PendingCall<v1::RunCommandRequest, v1::RunCommandResponse>;

inline std::unique_ptr<PendingExec> exec_async(const Client& client, v1::ExecCommandRequest req) {
  return std::make_unique<PendingExec>(client, &v1::Exec::Stub::ExecCommand, std::move(req));
}
inline std::unique_ptr<PendingRun> run_async(const Client& client, v1::RunCommandRequest req) {
  return std::make_unique<PendingRun>(client, &v1::Exec::Stub::RunCommand, std::move(req));
}

// A reviewer's WatchApprovals stream. Events are queued as they arrive, in stream order.
class Reviewer {
 public:
  explicit Reviewer(const TestDaemon& daemon, std::string agent_id = "reviewer")
      : client_(daemon, std::move(agent_id)) {
    TestDaemon::label(ctx_, client_.agent_id());
    reader_ = client_.approvals_stub().WatchApprovals(&ctx_, v1::WatchApprovalsRequest());
    thread_ = std::thread([this] {
      v1::ApprovalEvent event;
      while (reader_->Read(&event)) {
        std::lock_guard lock(mutex_);
        events_.push_back(event);
        cv_.notify_all();
      }
      std::lock_guard lock(mutex_);
      ended_ = true;
      cv_.notify_all();
    });
  }
  ~Reviewer() {
    ctx_.TryCancel();
    thread_.join();
    reader_->Finish();
  }

  const Client& client() const { return client_; }

  // The next event in stream order (nullopt when the stream ended or the guard passed).
  std::optional<v1::ApprovalEvent> next() {
    std::unique_lock lock(mutex_);
    if (!cv_.wait_for(lock, kGuard, [&] { return !events_.empty() || ended_; })) return std::nullopt;
    if (events_.empty()) return std::nullopt;
    v1::ApprovalEvent e = events_.front();
    events_.pop_front();
    return e;
  }
  // Consumes the initial snapshot up to `synced`; returns the snapshot's requests.
  std::vector<v1::ApprovalRequest> synced() {
    std::vector<v1::ApprovalRequest> snapshot;
    for (;;) {
      auto e = next();
      if (!e) {
        ADD_FAILURE() << "the watch stream ended or stalled before `synced`";
        return snapshot;
      }
      if (e->has_synced()) return snapshot;
      if (e->has_added()) snapshot.push_back(e->added());
    }
  }
  // The next event must be `added`.
  v1::ApprovalRequest added() {
    auto e = next();
    if (!e || !e->has_added()) {
      ADD_FAILURE() << "expected an `added` event, got " << (e ? e->DebugString() : std::string("nothing"));
      return {};
    }
    return e->added();
  }
  // The next event must be `resolved`.
  v1::ApprovalEvent::Resolved resolved() {
    auto e = next();
    if (!e || !e->has_resolved()) {
      ADD_FAILURE() << "expected a `resolved` event, got " << (e ? e->DebugString() : std::string("nothing"));
      return {};
    }
    return e->resolved();
  }
  grpc::Status resolve(const std::string& id, v1::ReviewDecision d, const std::string& rationale = "") const {
    return client_.resolve(id, d, rationale);
  }

 private:
  Client client_;
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReader<v1::ApprovalEvent>> reader_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<v1::ApprovalEvent> events_;
  bool ended_ = false;
  std::thread thread_;
};

inline v1::ExecCommandRequest exec_request(const std::string& workdir, std::vector<std::string> argv) {
  v1::ExecCommandRequest req;
  for (auto& a : argv) req.add_argv(a);
  req.set_workdir(workdir);
  req.set_yield_time_ms(30000);  // these commands finish at once; the result carries the exit
  return req;
}
// `mkdir` with about 1,000,000 bytes of arguments (the limit is 1 MiB), the n-th of a burst:
// unknown under `untrusted`, so it waits for a reviewer.
inline v1::ExecCommandRequest large_mkdir(const std::string& workdir, int n) {
  std::vector<std::string> argv{"mkdir"};
  for (int i = 0; i < 1000; ++i) argv.push_back(std::to_string(n) + "-" + std::string(990, 'a' + i % 26));
  return exec_request(workdir, argv);
}
// A daemon that asks about everything unknown (`untrusted`), with `rules`.
inline TestDaemonOptions untrusted_with_rules(std::string rules) {
  TestDaemonOptions o;
  o.approval_policy = "untrusted";
  o.rules = std::move(rules);
  return o;
}
// A daemon that asks about everything unknown and lets a uid have `cap` approvals pending.
inline TestDaemonOptions untrusted_with_pending_cap(int cap) {
  TestDaemonOptions o;
  o.approval_policy = "untrusted";
  o.extra_config = "[approvals]\nmax_pending_per_uid = " + std::to_string(cap) + "\n";
  return o;
}
inline v1::ExecCommandRequest exec_script(const std::string& workdir, const std::string& script) {
  v1::ExecCommandRequest req;
  req.set_cmd(script);
  req.set_login(false);
  req.set_workdir(workdir);
  req.set_yield_time_ms(30000);
  return req;
}

// Proves that no approval event reached `reviewer` before this point: `prompting` (a command
// the daemon is configured to prompt for) is sent by `agent`; the very next event must be its
// request, which is then denied. Events are delivered in order on the one stream.
inline void expect_no_event_before_fence(Reviewer& reviewer, const Client& agent, const std::string& workdir,
                                         const std::vector<std::string>& prompting = {"fence-cmd"}) {
  auto call = exec_async(agent, exec_request(workdir, prompting));
  auto e = reviewer.next();
  ASSERT_TRUE(e.has_value()) << "the fence request never arrived";
  ASSERT_TRUE(e->has_added()) << "an unexpected approval event came first: " << e->DebugString();
  ASSERT_EQ(e->added().argv(0), prompting[0]) << "an unexpected approval request came first: " << e->DebugString();
  ASSERT_TRUE(reviewer.resolve(e->added().approval_id(), v1::DENIED).ok());
  ASSERT_TRUE(call->wait());
  EXPECT_EQ(call->response().rejection().reason(), v1::Rejection::DENIED_BY_REVIEWER);
  auto r = reviewer.resolved();
  EXPECT_EQ(r.approval_id(), e->added().approval_id());
}

// `request` reaches the reviewer (as the next request, for exactly that argv); denied, it
// comes back as DENIED_BY_REVIEWER.
inline void expect_asked_then_denied(Reviewer& reviewer, const Client& agent, const v1::ExecCommandRequest& request) {
  auto call = exec_async(agent, request);
  auto asked = reviewer.added();
  EXPECT_TRUE(std::equal(asked.argv().begin(), asked.argv().end(), request.argv().begin(), request.argv().end()))
      << asked.DebugString();
  ASSERT_TRUE(reviewer.resolve(asked.approval_id(), v1::DENIED).ok());
  ASSERT_TRUE(call->wait());
  EXPECT_EQ(call->response().rejection().reason(), v1::Rejection::DENIED_BY_REVIEWER);
}

}  // namespace codexd::testing::approvals
