// The decision audit log over a real daemon: one JSON line per call with the documented fields,
// and never the command, cwd, environment, justification, output or call id.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "tests/approvals/approvals_test_util.h"

namespace codexd::testing::approvals {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kRules = R"(
prefix_rule(pattern=["mkdir"], decision="prompt", justification="creates directories")
prefix_rule(pattern=["rm", "-rf", "precious"], decision="forbidden", justification="precious data must never be deleted")
)";

std::vector<nlohmann::json> audit_lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::istringstream in(slurp(path));
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not one JSON object per line: " << line;
    out.push_back(j);
  }
  return out;
}

const std::vector<std::string> kFields = {"ts",          "tool",        "agent_id",        "uid",
                                          "turn_id",     "call_id_hash", "approval_policy", "requirement",
                                          "reviewed",    "decision",    "sandbox_override", "initial_sandbox",
                                          "attempt",     "outcome",     "approval_wait_ms", "duration_ms"};

class AuditLog : public DaemonTest {
 protected:
  static TestDaemonOptions options() {
    TestDaemonOptions o;
    o.approval_policy = "untrusted";
    o.rules = kRules;
    o.extra_config = "[agents.\"onreq\"]\napproval_policy = \"on-request\"\n";
    return o;
  }
  AuditLog() : DaemonTest(options()) {}
  std::string failure_context() const override { return "\naudit log:\n" + slurp(daemon_.audit_log_path()); }

  Client agent_{daemon_, "agent-a"};
  Client onreq_{daemon_, "onreq"};
  OutsideDir outside_;
};

TEST_F(AuditLog, AMarkerInCommandCwdEnvJustificationAndOutputNeverReachesTheLog) {
  const std::string M = "zqMARKERx7131";
  const std::string cwd = daemon_.workspace() + "/dir-" + M;
  ASSERT_TRUE(std::filesystem::create_directories(cwd));
  Reviewer reviewer(daemon_);
  reviewer.synced();
  int call_no = 0;
  auto decorate = [&](v1::ExecCommandRequest req) {
    (*req.mutable_env())["ENV_" + M] = "value-" + M;
    req.set_justification("because " + M);
    req.set_call_id("call-" + M + "-" + std::to_string(++call_no));
    req.set_turn_id("turn-1");
    return req;
  };

  // 1. allowed (known-safe under untrusted: no prompt), output carries the marker.
  auto allowed = agent_.exec_ok(decorate(exec_request(cwd, {"echo", M})));
  ASSERT_EQ(allowed.exit_code(), 0);
  ASSERT_THAT(allowed.output(), HasSubstr(M)) << "the marker must really be in the output";
  // 2. forbidden
  auto forbidden = agent_.exec_ok(decorate(exec_request(cwd, {"rm", "-rf", "precious", M})));
  ASSERT_EQ(forbidden.rejection().reason(), v1::Rejection::FORBIDDEN_BY_POLICY);
  // 3. denied (the reviewer's rationale carries the marker too)
  {
    auto call = exec_async(agent_, decorate(exec_script(cwd, "mkdir denied-" + M + " && echo " + M)));
    auto request = reviewer.added();
    ASSERT_TRUE(reviewer.resolve(request.approval_id(), v1::DENIED, "no " + M).ok());
    ASSERT_TRUE(call->wait());
    ASSERT_EQ(call->response().rejection().reason(), v1::Rejection::DENIED_BY_REVIEWER);
    reviewer.resolved();
  }
  // 4. approved
  {
    auto call = exec_async(agent_, decorate(exec_script(cwd, "mkdir approved-" + M + " && echo " + M)));
    auto request = reviewer.added();
    ASSERT_TRUE(reviewer.resolve(request.approval_id(), v1::APPROVED).ok());
    ASSERT_TRUE(call->wait());
    ASSERT_EQ(call->response().exit_code(), 0) << call->response().output();
    ASSERT_THAT(call->response().output(), HasSubstr(M));
    reviewer.resolved();
  }
  // 5. failed (ordinary non-zero exit; ls is known-safe), its error output names the marker
  auto failed = agent_.exec_ok(decorate(exec_request(cwd, {"ls", "missing-" + M})));
  ASSERT_NE(failed.exit_code(), 0);
  ASSERT_THAT(failed.output(), HasSubstr(M));
  // 6. sandbox denial (on-request: no retry)
  auto denial = onreq_.exec_ok(decorate(exec_request(cwd, {"cp", "/etc/hostname", outside_.path() + "/" + M})));
  ASSERT_TRUE(denial.likely_sandbox_denied());
  // 7. a one-shot RunCommand
  {
    v1::RunCommandRequest run;
    run.add_argv("echo");
    run.add_argv(M);
    run.set_workdir(cwd);
    (*run.mutable_env())["ENV_" + M] = M;
    run.set_justification(M);
    run.set_call_id("call-" + M + "-" + std::to_string(++call_no));
    v1::RunCommandResponse res;
    ASSERT_TRUE(agent_.run(run, &res).ok());
    ASSERT_THAT(res.stdout(), HasSubstr(M));
  }

  const std::string log = slurp(daemon_.audit_log_path());
  EXPECT_THAT(log, Not(HasSubstr(M))) << log;
  auto lines = audit_lines(daemon_.audit_log_path());
  ASSERT_EQ(lines.size(), 7u) << log;
  std::set<std::string> hashes;
  for (const auto& j : lines) {
    for (const auto& field : kFields) EXPECT_TRUE(j.contains(field)) << field << " missing in " << j.dump();
    EXPECT_EQ(j["uid"], ::geteuid());
    EXPECT_EQ(j["turn_id"], j["tool"] == "exec_command" ? "turn-1" : "");
    EXPECT_EQ(j["call_id_hash"].get<std::string>().size(), 32u);
    hashes.insert(j["call_id_hash"].get<std::string>());
  }
  EXPECT_EQ(hashes.size(), 7u) << "seven calls, seven distinct hashes";

  auto expect = [&](size_t i, const std::string& requirement, bool reviewed, const std::string& decision,
                    const std::string& outcome) {
    SCOPED_TRACE("audit line " + std::to_string(i + 1) + ": " + lines[i].dump());
    EXPECT_EQ(lines[i]["requirement"], requirement);
    EXPECT_EQ(lines[i]["reviewed"], reviewed);
    EXPECT_EQ(lines[i]["decision"], decision);
    EXPECT_EQ(lines[i]["outcome"], outcome);
  };
  expect(0, "skip", false, "none", "success");
  expect(1, "forbidden", false, "forbidden_by_policy", "rejected");
  expect(2, "needs_approval", true, "denied_by_reviewer", "rejected");
  expect(3, "needs_approval", true, "approved", "success");
  expect(4, "skip", false, "none", "success");
  expect(5, "skip", false, "none", "sandbox_denied");
  expect(6, "skip", false, "none", "success");
  EXPECT_EQ(lines[0]["tool"], "exec_command");
  EXPECT_EQ(lines[6]["tool"], "shell_command");
  EXPECT_EQ(lines[0]["agent_id"], "agent-a");
  EXPECT_EQ(lines[5]["agent_id"], "onreq");
  EXPECT_EQ(lines[0]["approval_policy"], "untrusted");
  EXPECT_EQ(lines[5]["approval_policy"], "on-request");
  EXPECT_EQ(lines[0]["initial_sandbox"], "linux-bwrap");
  EXPECT_EQ(lines[0]["attempt"], "first");
  EXPECT_EQ(lines[0]["exit_code"], 0);
  EXPECT_FALSE(lines[1].contains("exit_code")) << "nothing ran";
  EXPECT_FALSE(lines[2].contains("exit_code")) << "nothing ran";
  EXPECT_NE(lines[4]["exit_code"], 0);
  // Who answered: the reviewer's uid and its own label, on the lines a reviewer decided.
  for (size_t i : {2u, 3u}) {
    EXPECT_EQ(lines[i]["reviewer_uid"], ::geteuid()) << lines[i].dump();
    EXPECT_EQ(lines[i]["reviewer_agent"], "reviewer") << lines[i].dump();
  }
  for (size_t i : {0u, 1u, 4u, 5u, 6u}) EXPECT_FALSE(lines[i].contains("reviewer_uid")) << lines[i].dump();
}

// logrotate's way: the file is renamed, SIGHUP, and the next lines go to a new file under the
// old name (nothing lost, nothing written to the renamed one after the signal).
TEST_F(AuditLog, SighupReopensTheFileSoLogrotateWorks) {
  ASSERT_EQ(agent_.exec_ok(exec_request(daemon_.workspace(), {"echo", "one"})).exit_code(), 0);
  const std::string path = daemon_.audit_log_path();
  const std::string rotated = path + ".1";
  ASSERT_EQ(::rename(path.c_str(), rotated.c_str()), 0);
  ASSERT_TRUE(daemon_.signal_and_wait_ready(SIGHUP)) << daemon_.daemon_log();
  ASSERT_EQ(agent_.exec_ok(exec_request(daemon_.workspace(), {"echo", "two"})).exit_code(), 0);
  EXPECT_EQ(audit_lines(rotated).size(), 1u) << slurp(rotated);
  auto fresh = audit_lines(path);
  ASSERT_EQ(fresh.size(), 1u) << slurp(path);
  EXPECT_EQ(fresh[0]["outcome"], "success");
}

TEST_F(AuditLog, EscalationRetryAndBypassAreRecorded) {
  Reviewer reviewer(daemon_);
  reviewer.synced();
  // An approved escalation under on-request: bypass, attempt first.
  auto esc = exec_request(daemon_.workspace(), {"cp", "/etc/hostname", outside_.path() + "/esc"});
  esc.set_sandbox_permissions(v1::REQUIRE_ESCALATED);
  auto call = exec_async(onreq_, esc);
  auto request = reviewer.added();
  ASSERT_TRUE(reviewer.resolve(request.approval_id(), v1::APPROVED).ok());
  ASSERT_TRUE(call->wait());
  ASSERT_EQ(call->response().exit_code(), 0);
  reviewer.resolved();
  // A sandbox denial under untrusted, retried after approval: attempt escalated.
  auto retry = exec_async(agent_, exec_request(daemon_.workspace(), {"cp", "/etc/hostname", outside_.path() + "/retry"}));
  auto first = reviewer.added();  // cp prompts by heuristic under untrusted: approve attempt 1
  ASSERT_TRUE(reviewer.resolve(first.approval_id(), v1::APPROVED).ok());
  ASSERT_TRUE(retry->wait());
  ASSERT_EQ(retry->response().attempt(), 2u);

  auto lines = audit_lines(daemon_.audit_log_path());
  ASSERT_EQ(lines.size(), 2u) << "one line per call, not per attempt";
  EXPECT_EQ(lines[0]["sandbox_override"], "bypass");
  EXPECT_EQ(lines[0]["initial_sandbox"], "none");
  EXPECT_EQ(lines[0]["decision"], "approved");
  EXPECT_EQ(lines[1]["attempt"], "escalated");
  EXPECT_EQ(lines[1]["initial_sandbox"], "linux-bwrap");
  EXPECT_EQ(lines[1]["sandbox_override"], "bypass");
  EXPECT_EQ(lines[1]["outcome"], "success");
  EXPECT_EQ(lines[1]["decision"], "approved");
}

TEST_F(AuditLog, CallsRejectedBeforeThePolicyRecordNoRequirement) {
  // The escalation guard and a workdir the daemon cannot use end the call before the policy
  // is evaluated: the line must not claim a requirement.
  auto escalated = exec_request(daemon_.workspace(), {"mkdir", "x"});
  escalated.set_sandbox_permissions(v1::REQUIRE_ESCALATED);
  EXPECT_EQ(agent_.exec_ok(escalated).rejection().reason(), v1::Rejection::ESCALATION_NOT_ALLOWED);
  v1::ExecResult res;
  EXPECT_EQ(agent_.exec(exec_request(daemon_.workspace() + "/missing", {"ls"}), &res).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  auto lines = audit_lines(daemon_.audit_log_path());
  ASSERT_EQ(lines.size(), 2u) << slurp(daemon_.audit_log_path());
  EXPECT_EQ(lines[0]["requirement"], "none");
  EXPECT_EQ(lines[0]["decision"], "escalation_not_allowed");
  EXPECT_EQ(lines[0]["outcome"], "rejected");
  EXPECT_EQ(lines[1]["requirement"], "none");
  EXPECT_EQ(lines[1]["outcome"], "rejected");
}

TEST_F(AuditLog, AnAbandonedApprovalAndACancelledWaitAreEachOneLine) {
  Reviewer reviewer(daemon_);
  reviewer.synced();
  {
    auto call = exec_async(agent_, exec_request(daemon_.workspace(), {"mkdir", "abandoned"}));
    reviewer.added();
    call->cancel();
    EXPECT_EQ(reviewer.resolved().resolution_source(), "requester_disconnected");
    ASSERT_TRUE(call->wait());
  }
  const std::string fifo = daemon_.workspace() + "/wait.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  auto call = exec_async(onreq_, exec_script(daemon_.workspace(), "exec 3>" + fifo + "; echo started >&3; sleep 60"));
  int fd = wait_for_start(fifo);
  ASSERT_GE(fd, 0) << "the command never started";
  call->cancel();
  ASSERT_TRUE(call->wait());
  // The session lives on; kill it (its writer end closes).
  grpc::ClientContext list_ctx;
  onreq_.prepare(list_ctx);
  v1::ListSessionsResponse sessions;
  ASSERT_TRUE(onreq_.exec_stub().ListSessions(&list_ctx, v1::ListSessionsRequest(), &sessions).ok());
  for (const auto& s : sessions.sessions()) {
    grpc::ClientContext kill_ctx;
    onreq_.prepare(kill_ctx);
    v1::CancelRequest kill;
    kill.set_session_id(s.session_id());
    kill.set_mode(v1::CancelRequest::KILL);
    v1::CancelResponse killed;
    EXPECT_TRUE(onreq_.exec_stub().Cancel(&kill_ctx, kill, &killed).ok());
  }
  EXPECT_TRUE(writers_gone(fd));
  ::close(fd);
  // The daemon notices the cancellation on its own schedule: wait for the line (inotify).
  ASSERT_EQ(wait_for_lines(daemon_.audit_log_path(), 2), 2u) << slurp(daemon_.audit_log_path());
  auto lines = audit_lines(daemon_.audit_log_path());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["outcome"], "rejected");
  EXPECT_EQ(lines[0]["decision"], "aborted");
  EXPECT_EQ(lines[1]["outcome"], "cancelled");
}

}  // namespace
}  // namespace codexd::testing::approvals
