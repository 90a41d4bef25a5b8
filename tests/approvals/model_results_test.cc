// Issue 5 item 6: every failure boundary gives the agent a distinct, model-visible result (an
// RPC status for the call itself, or a result with a rejection reason and text, or an exit).
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <grpcpp/generic/generic_stub.h>

#include <map>
#include <set>

#include "tests/approvals/approvals_test_util.h"

namespace codexd::testing::approvals {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kRules = R"(
prefix_rule(pattern=["mkdir"], decision="prompt", justification="creates directories")
prefix_rule(pattern=["rm", "-rf", "precious"], decision="forbidden", justification="precious data must never be deleted")
)";

// What the agent sees for one boundary, reduced to what tells boundaries apart.
struct Seen {
  std::string rpc;        // gRPC status code name, "OK" when the call returned a result
  std::string rejection;  // Rejection reason name, "" when something ran
  std::string text;       // ExecResult.text (the model-visible rendering)
  bool exited = false;
  int exit_code = 0;
  bool likely_denied = false;
  std::string signature() const {
    // An RPC error reads as its code and message (a field error and an unparseable payload are
    // both INVALID_ARGUMENT, told apart by what they say).
    return rpc + "|" + (rpc == "OK" ? "" : text + "|") + rejection + "|" +
           (exited ? "exit " + std::to_string(exit_code) : "no exit") + (likely_denied ? "|likely sandbox denial" : "");
  }
};

std::string code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    default: return "code " + std::to_string(static_cast<int>(code));
  }
}

Seen seen(const grpc::Status& st, const v1::ExecResult& r) {
  Seen s;
  s.rpc = code_name(st.error_code());
  if (!st.ok()) {
    s.text = st.error_message();
    return s;
  }
  if (r.has_rejection()) s.rejection = v1::Rejection::Reason_Name(r.rejection().reason());
  s.text = r.text();
  s.exited = r.has_exit_code();
  s.exit_code = r.exit_code();
  s.likely_denied = r.likely_sandbox_denied();
  return s;
}

class ModelResults : public DaemonTest {
 protected:
  static TestDaemonOptions options() {
    TestDaemonOptions o;
    o.approval_policy = "on-request";
    o.rules = kRules;
    o.extra_config = "[approvals]\ntimeout_ms = 400\nwhen_no_reviewer = \"reject\"\n";
    return o;
  }
  ModelResults() : DaemonTest(options()) {}

  // --- one function per boundary; each TEST asserts its details, the last test compares all ---

  Seen bad_payload() {
    auto req = exec_request(ws(), {"ls"});
    req.set_cmd("ls");  // both cmd and argv
    v1::ExecResult res;
    grpc::Status st = agent_.exec(req, &res);
    return seen(st, res);
  }
  // Bytes that are no ExecCommandRequest at all (a payload that does not parse).
  Seen parse_failure() {
    grpc::GenericStub stub(daemon_.channel());
    grpc::ClientContext ctx;
    agent_.prepare(ctx);
    const std::string garbage = "\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01";  // field 1, length overflows
    grpc::Slice slice(garbage);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&ctx, "/codexd.v1.Exec/ExecCommand", grpc::StubOptions(), &request, &response,
                   [&](grpc::Status st) { done.set_value(st); });
    auto future = done.get_future();
    EXPECT_EQ(future.wait_for(kGuard), std::future_status::ready);
    grpc::Status st = future.get();
    Seen s;
    s.rpc = code_name(st.error_code());
    s.text = st.error_message();
    return s;
  }
  Seen forbidden() {
    v1::ExecResult res;
    grpc::Status st = agent_.exec(exec_request(ws(), {"rm", "-rf", "precious"}), &res);
    return seen(st, res);
  }
  // Asks a reviewer and answers with `decision`.
  Seen reviewed(v1::ReviewDecision decision, const std::string& rationale) {
    Reviewer reviewer(daemon_);
    reviewer.synced();
    auto call = exec_async(agent_, exec_request(ws(), {"mkdir", "reviewed"}));
    auto request = reviewer.added();
    EXPECT_TRUE(reviewer.resolve(request.approval_id(), decision, rationale).ok());
    EXPECT_TRUE(call->wait());
    EXPECT_FALSE(exists(ws("reviewed")));
    return seen(call->status(), call->response());
  }
  Seen denied() { return reviewed(v1::DENIED, "not now"); }
  Seen aborted() { return reviewed(v1::ABORT, ""); }
  Seen timed_out() {
    Reviewer reviewer(daemon_);  // watching, never answering
    reviewer.synced();
    auto call = exec_async(agent_, exec_request(ws(), {"mkdir", "timed-out"}));
    reviewer.added();
    EXPECT_EQ(reviewer.resolved().resolution_source(), "timeout");
    EXPECT_TRUE(call->wait());
    return seen(call->status(), call->response());
  }
  // Must run while no reviewer is connected.
  Seen no_reviewer() {
    v1::ExecResult res;
    grpc::Status st = agent_.exec(exec_request(ws(), {"mkdir", "no-reviewer"}), &res);
    return seen(st, res);
  }
  // A protected path (.git) that is a symlink inside the writable root: bwrap cannot keep it
  // read-only, so the sandbox cannot be built, and the command must not run without it.
  Seen sandbox_transform_failure() {
    std::filesystem::create_directories(ws("repo/realgit"));
    std::error_code ec;
    std::filesystem::create_directory_symlink("realgit", ws("repo/.git"), ec);
    v1::ExecResult res;
    grpc::Status st = agent_.exec(exec_request(ws("repo"), {"touch", "transform-marker"}), &res);
    EXPECT_FALSE(exists(ws("repo/transform-marker")));
    return seen(st, res);
  }
  Seen ordinary_exit() {
    v1::ExecResult res;
    grpc::Status st = agent_.exec(exec_script(ws(), "echo plain failure; exit 3"), &res);
    return seen(st, res);
  }
  Seen command_not_found() {
    v1::ExecResult res;
    grpc::Status st = agent_.exec(exec_request(ws(), {"/nope/not-a-program"}), &res);
    return seen(st, res);
  }
  Seen likely_denial() {
    v1::ExecResult res;
    grpc::Status st = agent_.exec(exec_request(ws(), {"cp", "/etc/hostname", outside_.path() + "/copy"}), &res);
    EXPECT_FALSE(exists(outside_.path() + "/copy"));
    return seen(st, res);
  }
  Seen cancelled_run() {
    const std::string fifo = ws("run.fifo");
    ::mkfifo(fifo.c_str(), 0666);
    v1::RunCommandRequest req;
    req.set_cmd("exec 3>" + fifo + "; echo started >&3; sleep 60");
    req.set_login(false);
    req.set_workdir(ws());
    req.set_timeout_ms(120000);
    auto call = run_async(agent_, req);
    int fd = wait_for_start(fifo);
    EXPECT_GE(fd, 0) << "the command never started";
    call->cancel();
    EXPECT_TRUE(call->wait());
    EXPECT_TRUE(fd >= 0 && writers_gone(fd)) << "the one-shot command outlived its cancelled call";
    if (fd >= 0) ::close(fd);
    ::unlink(fifo.c_str());
    Seen s;
    s.rpc = code_name(call->status().error_code());
    s.text = call->status().error_message();
    return s;
  }

  Client agent_{daemon_, "agent-a"};
  OutsideDir outside_;
};

TEST_F(ModelResults, BadPayloadIsInvalidArgumentNamingTheField) {
  Seen s = bad_payload();
  EXPECT_EQ(s.rpc, "INVALID_ARGUMENT");
  EXPECT_THAT(s.text, HasSubstr("`cmd`"));
  EXPECT_THAT(s.text, HasSubstr("`argv`"));
  // Other payload errors name their field too.
  v1::ExecResult res;
  auto relative = exec_request("relative/dir", {"ls"});
  grpc::Status st = agent_.exec(relative, &res);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("`workdir`"));
  auto missing = exec_request(ws("missing-dir"), {"ls"});
  st = agent_.exec(missing, &res);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
  auto bad_env = exec_request(ws(), {"ls"});
  (*bad_env.mutable_env())["A=B"] = "x";
  st = agent_.exec(bad_env, &res);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("`env`"));
}

TEST_F(ModelResults, ParseFailureIsAnRpcErrorOfItsOwn) {
  // The daemon parses unary requests itself (daemon/server/raw_unary.h): INVALID_ARGUMENT that
  // names the request type, not a field (gRPC 1.51 alone would answer UNIMPLEMENTED, no message).
  Seen s = parse_failure();
  EXPECT_EQ(s.rpc, "INVALID_ARGUMENT");
  EXPECT_EQ(s.text, "request could not be parsed as codexd.v1.ExecCommandRequest");
  // The daemon is still serving.
  v1::ExecResult res;
  EXPECT_TRUE(agent_.exec(exec_request(ws(), {"true"}), &res).ok());
}

TEST_F(ModelResults, Forbidden) {
  Seen s = forbidden();
  EXPECT_EQ(s.rejection, "FORBIDDEN_BY_POLICY");
  EXPECT_EQ(s.text, "`rm -rf precious` rejected: blocked by policy: precious data must never be deleted");
}

TEST_F(ModelResults, DeniedByReviewer) {
  Seen s = denied();
  EXPECT_EQ(s.rejection, "DENIED_BY_REVIEWER");
  EXPECT_EQ(s.text, "rejected by user: not now");
}

TEST_F(ModelResults, AbortedByReviewer) {
  Seen s = aborted();
  EXPECT_EQ(s.rejection, "ABORTED");
  EXPECT_THAT(s.text, StartsWith("aborted"));
  EXPECT_THAT(s.text, HasSubstr("did not run"));
}

TEST_F(ModelResults, ApprovalTimedOut) {
  Seen s = timed_out();
  EXPECT_EQ(s.rejection, "APPROVAL_TIMED_OUT");
  EXPECT_EQ(s.text, "approval request for `mkdir timed-out` timed out; the command did not run");
}

TEST_F(ModelResults, NoReviewer) {
  Seen s = no_reviewer();
  EXPECT_EQ(s.rejection, "NO_REVIEWER");
  EXPECT_EQ(s.text, "no reviewer is available to approve `mkdir no-reviewer`; the command did not run");
}

TEST_F(ModelResults, SandboxTransformFailureIsSandboxUnavailable) {
  Seen s = sandbox_transform_failure();
  EXPECT_EQ(s.rejection, "SANDBOX_UNAVAILABLE");
  EXPECT_THAT(s.text, StartsWith("exec_command failed for `touch transform-marker`: sandbox unavailable: "));
  EXPECT_THAT(s.text, HasSubstr(".git"));
}

TEST_F(ModelResults, OrdinaryNonZeroExit) {
  Seen s = ordinary_exit();
  EXPECT_EQ(s.rejection, "");
  EXPECT_TRUE(s.exited);
  EXPECT_EQ(s.exit_code, 3);
  EXPECT_FALSE(s.likely_denied);
  EXPECT_THAT(s.text, HasSubstr("Process exited with code 3"));
  EXPECT_THAT(s.text, HasSubstr("plain failure"));
}

// Issue 19: the helper's own error named the sandbox, so a typo looked like a sandbox denial
// and the agent was told to escalate it.
TEST_F(ModelResults, ACommandThatDoesNotExistIsNotASandboxDenial) {
  Seen s = command_not_found();
  EXPECT_EQ(s.rejection, "");
  EXPECT_TRUE(s.exited);
  EXPECT_EQ(s.exit_code, 127);
  EXPECT_FALSE(s.likely_denied) << s.text;
  EXPECT_THAT(s.text, HasSubstr("command not found: /nope/not-a-program"));
}

TEST_F(ModelResults, LikelySandboxDenial) {
  Seen s = likely_denial();
  EXPECT_EQ(s.rejection, "");
  EXPECT_TRUE(s.exited);
  EXPECT_NE(s.exit_code, 0);
  EXPECT_TRUE(s.likely_denied) << s.text;
  EXPECT_THAT(s.text, HasSubstr("Read-only file system"));
}

TEST_F(ModelResults, CancelledRunCommandKillsTheCommand) {
  Seen s = cancelled_run();
  EXPECT_EQ(s.rpc, "CANCELLED");
}

TEST_F(ModelResults, CancelledExecCommandWaitLeavesTheSessionRunning) {
  const std::string fifo = ws("exec.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  auto call = exec_async(agent_, exec_script(ws(), "exec 3>" + fifo + "; echo started >&3; sleep 60"));
  int fd = wait_for_start(fifo);
  ASSERT_GE(fd, 0);
  call->cancel();
  ASSERT_TRUE(call->wait());
  EXPECT_EQ(call->status().error_code(), grpc::StatusCode::CANCELLED);
  // The session lives on (unified exec): it is listed as running, and can be killed.
  grpc::ClientContext ctx;
  agent_.prepare(ctx);
  v1::ListSessionsResponse sessions;
  ASSERT_TRUE(agent_.exec_stub().ListSessions(&ctx, v1::ListSessionsRequest(), &sessions).ok());
  ASSERT_EQ(sessions.sessions_size(), 1);
  EXPECT_TRUE(sessions.sessions(0).running());
  grpc::ClientContext kill_ctx;
  agent_.prepare(kill_ctx);
  v1::CancelRequest kill;
  kill.set_session_id(sessions.sessions(0).session_id());
  kill.set_mode(v1::CancelRequest::KILL);
  v1::CancelResponse killed;
  ASSERT_TRUE(agent_.exec_stub().Cancel(&kill_ctx, kill, &killed).ok());
  EXPECT_TRUE(writers_gone(fd));
  ::close(fd);
}

TEST_F(ModelResults, EveryBoundaryReadsDifferently) {
  std::map<std::string, Seen> all;
  all["no reviewer"] = no_reviewer();  // first: before any reviewer ever connected
  all["bad payload"] = bad_payload();
  all["parse failure"] = parse_failure();
  all["forbidden"] = forbidden();
  all["denied"] = denied();
  all["aborted"] = aborted();
  all["timed out"] = timed_out();
  all["sandbox transform failure"] = sandbox_transform_failure();
  all["ordinary non-zero exit"] = ordinary_exit();
  all["likely sandbox denial"] = likely_denial();
  all["cancellation"] = cancelled_run();
  std::map<std::string, std::string> by_signature;
  std::map<std::string, std::string> by_text;
  for (const auto& [boundary, s] : all) {
    auto [it, fresh] = by_signature.emplace(s.signature(), boundary);
    EXPECT_TRUE(fresh) << boundary << " and " << it->second << " look the same to the agent: " << s.signature();
    if (!s.text.empty()) {
      auto [t, fresh_text] = by_text.emplace(s.text, boundary);
      EXPECT_TRUE(fresh_text) << boundary << " and " << t->second << " have the same text: " << s.text;
    }
  }
  EXPECT_EQ(by_signature.size(), all.size());
}

}  // namespace
}  // namespace codexd::testing::approvals
