// Issue 5 "done when": a real codexd with two concurrent clients, an agent and a reviewer
// (different agent ids, different connections). Every claim about the sandbox is proved by a
// real write: inside the workspace must succeed, outside (/var/tmp, not a writable root) must
// fail unless the sandbox was lifted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/approvals/approvals_test_util.h"

namespace codexd::testing::approvals {
namespace {

using ::testing::HasSubstr;

// Under `untrusted` (the daemon default here): fence-cmd and mkdir prompt by rule, touch/true
// are explicitly allowed, rm -rf precious is forbidden, anything else unknown prompts by
// heuristic and known-safe commands (ls, cat, false, ...) run without asking.
constexpr const char* kRules = R"(
prefix_rule(pattern=["fence-cmd"], decision="prompt", justification="a test fence")
prefix_rule(pattern=["mkdir"], decision="prompt", justification="creates directories")
prefix_rule(pattern=["touch"], decision="allow")
prefix_rule(pattern=["true"], decision="allow")
prefix_rule(pattern=["rm", "-rf", "precious"], decision="forbidden", justification="precious data must never be deleted")
)";

constexpr const char* kAgents = R"(
[agents."onreq"]
approval_policy = "on-request"
[agents."never"]
approval_policy = "never"
)";

TestDaemonOptions main_options() {
  TestDaemonOptions o;
  o.approval_policy = "untrusted";
  o.rules = kRules;
  o.extra_config = kAgents;
  return o;
}

// touch is explicitly allowed but ls is only heuristically safe: no prompt, sandboxed attempt 1.
std::string denied_write_script(const std::string& target) { return "touch " + target + " && ls"; }

class Approvals : public DaemonTest {
 protected:
  explicit Approvals(TestDaemonOptions options = main_options()) : DaemonTest(std::move(options)) {}
  void SetUp() override {
    DaemonTest::SetUp();
    if (HasFatalFailure()) return;
    reviewer_ = std::make_unique<Reviewer>(daemon_);
    EXPECT_TRUE(reviewer_->synced().empty());
  }

  // The agent writes <outside_>/<name>: attempt 1 fails in the sandbox, and under `untrusted`
  // the reviewer is asked about the unsandboxed retry (`request`; the test checks its kind).
  struct DeniedWrite {
    std::string outside;  // the target
    std::unique_ptr<PendingExec> call;
    v1::ApprovalRequest request;
  };
  DeniedWrite start_denied_write(const std::string& name) {
    DeniedWrite w;
    w.outside = outside_.path() + "/" + name;
    w.call = exec_async(agent_, exec_script(ws(), denied_write_script(w.outside)));
    w.request = reviewer_->added();
    return w;
  }

  std::unique_ptr<Reviewer> reviewer_;
  Client agent_{daemon_, "agent-a"};
  Client onreq_{daemon_, "onreq"};
  OutsideDir outside_;
};

TEST_F(Approvals, ForbiddenNeverPrompts) {
  ASSERT_TRUE(exists(ws()));
  ::mkdir(ws("precious").c_str(), 0755);
  auto res = agent_.exec_ok(exec_request(ws(), {"rm", "-rf", "precious"}));
  ASSERT_TRUE(res.has_rejection());
  EXPECT_EQ(res.rejection().reason(), v1::Rejection::FORBIDDEN_BY_POLICY);
  EXPECT_EQ(res.rejection().justification(), "precious data must never be deleted");
  EXPECT_THAT(res.text(), HasSubstr("precious data must never be deleted"));
  EXPECT_FALSE(res.has_exit_code());
  EXPECT_TRUE(exists(ws("precious"))) << "nothing ran";
  // Also inside a script, for every approval policy of this daemon.
  for (const Client* c : {&agent_, &onreq_}) {
    auto r = c->exec_ok(exec_script(ws(), "ls && rm -rf precious"));
    EXPECT_EQ(r.rejection().reason(), v1::Rejection::FORBIDDEN_BY_POLICY) << c->agent_id();
  }
  expect_no_event_before_fence(*reviewer_, agent_, ws());
}

TEST_F(Approvals, ApprovedRunsSandboxed) {
  // on-request: an approved prompt runs in the sandbox, and a sandbox denial is not retried.
  const std::string outside = outside_.path() + "/approved";
  auto call = exec_async(onreq_, exec_script(ws(), "mkdir inside && mkdir " + outside));
  auto request = reviewer_->added();
  EXPECT_EQ(request.agent_id(), "onreq");
  EXPECT_EQ(request.reason().kind(), v1::ApprovalReason::PROMPT_RULE);
  EXPECT_EQ(request.reason().justification(), "creates directories");
  EXPECT_EQ(request.sandbox().backend(), v1::SANDBOX_LINUX_BWRAP) << "the reviewer is told it runs sandboxed";
  EXPECT_EQ(request.workdir(), ws());
  EXPECT_EQ(request.cmd(), "mkdir inside && mkdir " + outside);
  EXPECT_FALSE(call->returned()) << "the command waits for the reviewer";
  ASSERT_TRUE(reviewer_->resolve(request.approval_id(), v1::APPROVED).ok());
  ASSERT_TRUE(call->wait());
  ASSERT_TRUE(call->status().ok()) << call->status().error_message();
  const auto& res = call->response();
  EXPECT_FALSE(res.has_rejection());
  EXPECT_EQ(res.sandbox(), v1::SANDBOX_LINUX_BWRAP);
  EXPECT_EQ(res.attempt(), 1u);
  EXPECT_TRUE(exists(ws("inside"))) << "writing inside the workspace works";
  EXPECT_FALSE(exists(outside)) << "writing outside the workspace must fail in the sandbox";
  EXPECT_NE(res.exit_code(), 0);
  EXPECT_TRUE(res.likely_sandbox_denied()) << res.output();
  auto resolved = reviewer_->resolved();
  EXPECT_EQ(resolved.approval_id(), request.approval_id());
  EXPECT_EQ(resolved.decision(), v1::APPROVED);
  EXPECT_EQ(resolved.resolution_source(), "reviewer");
  EXPECT_EQ(resolved.resolved_by_uid(), ::geteuid());
  // No retry question under on-request.
  expect_no_event_before_fence(*reviewer_, agent_, ws());
}

TEST_F(Approvals, ApprovedFirstAttemptIsRetriedUnsandboxedWithoutAskingAgainUnderUntrusted) {
  // Codex: after a reviewer approved attempt 1, a sandbox denial is retried without the
  // sandbox and without a second question.
  const std::string outside = outside_.path() + "/retried";
  auto call = exec_async(agent_, exec_request(ws(), {"mkdir", outside}));
  auto request = reviewer_->added();
  EXPECT_EQ(request.attempt(), 1u);
  ASSERT_TRUE(reviewer_->resolve(request.approval_id(), v1::APPROVED).ok());
  ASSERT_TRUE(call->wait());
  const auto& res = call->response();
  EXPECT_EQ(res.attempt(), 2u);
  EXPECT_EQ(res.sandbox(), v1::SANDBOX_NONE);
  EXPECT_EQ(res.exit_code(), 0) << res.output();
  EXPECT_TRUE(exists(outside));
  reviewer_->resolved();
  expect_no_event_before_fence(*reviewer_, agent_, ws());
}

TEST_F(Approvals, DeniedNothingRan) {
  auto call = exec_async(agent_, exec_request(ws(), {"mkdir", "marker"}));
  auto request = reviewer_->added();
  ASSERT_TRUE(reviewer_->resolve(request.approval_id(), v1::DENIED, "use the build dir").ok());
  ASSERT_TRUE(call->wait());
  ASSERT_TRUE(call->status().ok());
  EXPECT_EQ(call->response().rejection().reason(), v1::Rejection::DENIED_BY_REVIEWER);
  EXPECT_EQ(call->response().rejection().message(), "use the build dir");
  EXPECT_EQ(call->response().text(), "rejected by user: use the build dir");
  EXPECT_FALSE(call->response().has_exit_code());
  EXPECT_FALSE(exists(ws("marker")));
  EXPECT_EQ(reviewer_->resolved().decision(), v1::DENIED);
}

TEST_F(Approvals, ExplicitAllowOfEverySegmentRunsUnsandboxed) {
  const std::string outside = outside_.path() + "/bypassed";
  v1::CheckPolicyRequest check;
  check.set_cmd("touch " + outside + " && true");
  check.set_workdir(ws());
  v1::CheckPolicyResponse policy;
  ASSERT_TRUE(agent_.check(check, &policy).ok());
  EXPECT_EQ(policy.requirement().kind(), v1::ApprovalRequirement::SKIP);
  EXPECT_TRUE(policy.requirement().bypass_sandbox());

  auto res = agent_.exec_ok(exec_script(ws(), "touch " + outside + " && true"));
  EXPECT_FALSE(res.has_rejection());
  EXPECT_EQ(res.sandbox(), v1::SANDBOX_NONE);
  EXPECT_EQ(res.exit_code(), 0) << res.output();
  EXPECT_TRUE(exists(outside)) << "the write outside the workspace succeeded: no sandbox";
  expect_no_event_before_fence(*reviewer_, agent_, ws());
}

TEST_F(Approvals, AnExplicitAllowOfOnlySomeSegmentsStaysSandboxed) {
  const std::string outside = outside_.path() + "/partly";
  auto res = onreq_.exec_ok(exec_script(ws(), "touch inside " + outside + " && echo done"));
  EXPECT_EQ(res.sandbox(), v1::SANDBOX_LINUX_BWRAP);
  EXPECT_TRUE(exists(ws("inside")));
  EXPECT_FALSE(exists(outside));
}

TEST_F(Approvals, OrdinaryNonZeroExitIsNotADenialAndTriggersNoRetry) {
  for (const auto& argv : {std::vector<std::string>{"false"}, std::vector<std::string>{"ls", ws("does-not-exist")}}) {
    auto res = agent_.exec_ok(exec_request(ws(), argv));
    EXPECT_FALSE(res.has_rejection());
    EXPECT_EQ(res.sandbox(), v1::SANDBOX_LINUX_BWRAP);
    EXPECT_NE(res.exit_code(), 0);
    EXPECT_FALSE(res.likely_sandbox_denied()) << res.output();
    EXPECT_EQ(res.attempt(), 1u);
    EXPECT_THAT(res.text(), HasSubstr("Process exited with code " + std::to_string(res.exit_code())));
  }
  expect_no_event_before_fence(*reviewer_, agent_, ws());
}

TEST_F(Approvals, SandboxDenialUnderUntrustedAsksForTheRetryAndRunsUnsandboxedAfterApproval) {
  auto [outside, call, request] = start_denied_write("retry-approved");
  EXPECT_EQ(request.reason().kind(), v1::ApprovalReason::SANDBOX_RETRY);
  EXPECT_EQ(request.attempt(), 2u);
  EXPECT_EQ(request.sandbox().backend(), v1::SANDBOX_NONE) << "the reviewer is told attempt 2 runs without the sandbox";
  EXPECT_FALSE(exists(outside)) << "attempt 1 ran sandboxed and failed";
  ASSERT_TRUE(reviewer_->resolve(request.approval_id(), v1::APPROVED).ok());
  ASSERT_TRUE(call->wait());
  const auto& res = call->response();
  EXPECT_EQ(res.attempt(), 2u);
  EXPECT_EQ(res.sandbox(), v1::SANDBOX_NONE);
  EXPECT_EQ(res.exit_code(), 0) << res.output();
  EXPECT_FALSE(res.likely_sandbox_denied());
  EXPECT_TRUE(exists(outside));
}

TEST_F(Approvals, SandboxDenialUnderUntrustedDoesNotRunUnsandboxedAfterDenial) {
  auto [outside, call, request] = start_denied_write("retry-denied");
  EXPECT_EQ(request.reason().kind(), v1::ApprovalReason::SANDBOX_RETRY);
  ASSERT_TRUE(reviewer_->resolve(request.approval_id(), v1::DENIED).ok());
  ASSERT_TRUE(call->wait());
  const auto& res = call->response();
  EXPECT_FALSE(res.has_rejection()) << "the caller gets the sandboxed attempt's result";
  EXPECT_EQ(res.attempt(), 1u);
  EXPECT_EQ(res.sandbox(), v1::SANDBOX_LINUX_BWRAP);
  EXPECT_NE(res.exit_code(), 0);
  EXPECT_TRUE(res.likely_sandbox_denied());
  EXPECT_FALSE(exists(outside));
}

TEST_F(Approvals, ARetryQuestionWhoseClientDisconnectsRunsNothing) {
  auto [outside, call, request] = start_denied_write("retry-gone");
  ASSERT_EQ(request.reason().kind(), v1::ApprovalReason::SANDBOX_RETRY);
  call->cancel();
  auto resolved = reviewer_->resolved();
  EXPECT_EQ(resolved.approval_id(), request.approval_id());
  EXPECT_EQ(resolved.resolution_source(), "requester_disconnected");
  ASSERT_TRUE(call->wait());
  EXPECT_EQ(reviewer_->resolve(request.approval_id(), v1::APPROVED).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_FALSE(exists(outside));
}

TEST_F(Approvals, SandboxDenialUnderOnRequestIsReturnedWithoutARetryQuestion) {
  const std::string outside = outside_.path() + "/no-retry";
  auto res = onreq_.exec_ok(exec_script(ws(), denied_write_script(outside)));
  EXPECT_EQ(res.attempt(), 1u);
  EXPECT_TRUE(res.likely_sandbox_denied());
  EXPECT_FALSE(exists(outside));
  expect_no_event_before_fence(*reviewer_, agent_, ws());
}

TEST_F(Approvals, ApprovedForSessionSkipsTheSecondPromptForTheSameCommandOnly) {
  auto first = exec_async(agent_, exec_request(ws(), {"mkdir", "-p", "session-a"}));
  auto request = reviewer_->added();
  ASSERT_TRUE(reviewer_->resolve(request.approval_id(), v1::APPROVED_FOR_SESSION).ok());
  ASSERT_TRUE(first->wait());
  EXPECT_EQ(first->response().exit_code(), 0);
  EXPECT_EQ(reviewer_->resolved().decision(), v1::APPROVED_FOR_SESSION);
  ::rmdir(ws("session-a").c_str());

  // The same command again (also as a one-command script): runs without a prompt, sandboxed.
  auto again = agent_.exec_ok(exec_request(ws(), {"mkdir", "-p", "session-a"}));
  EXPECT_EQ(again.exit_code(), 0);
  EXPECT_EQ(again.sandbox(), v1::SANDBOX_LINUX_BWRAP);
  EXPECT_TRUE(exists(ws("session-a")));
  auto script = agent_.exec_ok(exec_script(ws(), "mkdir -p session-a"));
  EXPECT_EQ(script.exit_code(), 0);
  expect_no_event_before_fence(*reviewer_, agent_, ws());

  // Another command still asks.
  expect_asked_then_denied(*reviewer_, agent_, exec_request(ws(), {"mkdir", "-p", "session-b"}));
}

TEST_F(Approvals, ApprovedWithAmendmentIsRememberedBeforeTheCommandRuns) {
  std::ofstream(ws("src")) << "x\n";
  auto first = exec_async(agent_, exec_request(ws(), {"cp", "src", "copy-a"}));
  auto request = reviewer_->added();
  EXPECT_EQ(request.reason().kind(), v1::ApprovalReason::HEURISTIC);
  ASSERT_EQ(std::vector<std::string>(request.proposed_amendment().begin(), request.proposed_amendment().end()),
            (std::vector<std::string>{"cp", "src", "copy-a"}));
  ASSERT_TRUE(reviewer_->resolve(request.approval_id(), v1::APPROVED_EXECPOLICY_AMENDMENT).ok());
  ASSERT_TRUE(first->wait());
  EXPECT_EQ(first->response().exit_code(), 0);
  EXPECT_EQ(reviewer_->resolved().decision(), v1::APPROVED_EXECPOLICY_AMENDMENT);
  // By the time the approved command answered, the rule was written and in force.
  EXPECT_THAT(slurp(daemon_.dir() + "/rules/amend.rules"),
              HasSubstr(R"(prefix_rule(pattern=["cp", "src", "copy-a"], decision="allow"))"));
  v1::CheckPolicyRequest check;
  for (const char* a : {"cp", "src", "copy-a"}) check.add_argv(a);
  v1::CheckPolicyResponse checked;
  ASSERT_TRUE(agent_.check(check, &checked).ok());
  EXPECT_EQ(checked.requirement().kind(), v1::ApprovalRequirement::SKIP) << checked.DebugString();
  EXPECT_TRUE(checked.requirement().bypass_sandbox());

  // The same command again runs without a prompt (an explicit allow: unsandboxed, as in Codex);
  // another cp still asks.
  ::unlink(ws("copy-a").c_str());
  auto again = agent_.exec_ok(exec_request(ws(), {"cp", "src", "copy-a"}));
  EXPECT_EQ(again.exit_code(), 0);
  EXPECT_TRUE(exists(ws("copy-a")));
  expect_no_event_before_fence(*reviewer_, agent_, ws());
  expect_asked_then_denied(*reviewer_, agent_, exec_request(ws(), {"cp", "src", "copy-b"}));
}

TEST_F(Approvals, TwoAgentsApprovalsDoNotCross) {
  Client agent_b(daemon_, "agent-b");
  // A session approval for agent-a does not cover agent-b.
  auto a1 = exec_async(agent_, exec_request(ws(), {"mkdir", "-p", "shared"}));
  auto ra = reviewer_->added();
  EXPECT_EQ(ra.agent_id(), "agent-a");
  ASSERT_TRUE(reviewer_->resolve(ra.approval_id(), v1::APPROVED_FOR_SESSION).ok());
  ASSERT_TRUE(a1->wait());
  reviewer_->resolved();

  auto b1 = exec_async(agent_b, exec_request(ws(), {"mkdir", "-p", "shared"}));
  auto rb = reviewer_->added();
  EXPECT_EQ(rb.agent_id(), "agent-b") << "agent-b is asked although agent-a approved the same command";

  // While agent-b waits, agent-a's new request is answered: agent-b stays blocked.
  auto a2 = exec_async(agent_, exec_request(ws(), {"mkdir", "-p", "only-a"}));
  auto ra2 = reviewer_->added();
  EXPECT_EQ(ra2.agent_id(), "agent-a");
  ASSERT_TRUE(reviewer_->resolve(ra2.approval_id(), v1::APPROVED).ok());
  ASSERT_TRUE(a2->wait());
  EXPECT_EQ(a2->response().exit_code(), 0);
  EXPECT_EQ(reviewer_->resolved().approval_id(), ra2.approval_id());
  EXPECT_FALSE(b1->returned()) << "agent-a's answer unblocked agent-b";
  auto pending = reviewer_->client().list();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].approval_id(), rb.approval_id());

  ASSERT_TRUE(reviewer_->resolve(rb.approval_id(), v1::DENIED).ok());
  ASSERT_TRUE(b1->wait());
  EXPECT_EQ(b1->response().rejection().reason(), v1::Rejection::DENIED_BY_REVIEWER);
}

TEST_F(Approvals, FirstAnswerWinsLaterAnswersFailAndUnknownIdsAreNotFound) {
  Client second_reviewer(daemon_, "ide-plugin");
  auto call = exec_async(agent_, exec_request(ws(), {"mkdir", "race"}));
  auto request = reviewer_->added();
  ASSERT_TRUE(second_reviewer.resolve(request.approval_id(), v1::DENIED).ok());
  grpc::Status late = reviewer_->resolve(request.approval_id(), v1::APPROVED);
  EXPECT_EQ(late.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << late.error_message();
  ASSERT_TRUE(call->wait());
  EXPECT_EQ(call->response().rejection().reason(), v1::Rejection::DENIED_BY_REVIEWER);
  EXPECT_FALSE(exists(ws("race")));
  EXPECT_EQ(reviewer_->resolve("apr_0123456789abcdef", v1::APPROVED).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(reviewer_->resolve("", v1::APPROVED).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  const grpc::Status unset = reviewer_->resolve(request.approval_id(), v1::REVIEW_DECISION_UNSPECIFIED);
  EXPECT_EQ(unset.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(unset.error_message(), HasSubstr("(got unset, REVIEW_DECISION_UNSPECIFIED)"));
}

TEST_F(Approvals, AReviewerConnectingLateSeesPendingRequestsFirst) {
  auto call = exec_async(agent_, exec_request(ws(), {"mkdir", "late"}));
  auto request = reviewer_->added();
  Reviewer late(daemon_, "late-reviewer");
  auto snapshot = late.synced();
  ASSERT_EQ(snapshot.size(), 1u);
  EXPECT_EQ(snapshot[0].approval_id(), request.approval_id());
  EXPECT_EQ(snapshot[0].argv(0), "mkdir");
  EXPECT_EQ(snapshot[0].matched_rules(0).justification(), "creates directories");
  ASSERT_TRUE(late.resolve(request.approval_id(), v1::ABORT).ok());
  ASSERT_TRUE(call->wait());
  EXPECT_EQ(call->response().rejection().reason(), v1::Rejection::ABORTED);
  EXPECT_EQ(late.resolved().decision(), v1::ABORT);
  EXPECT_EQ(reviewer_->resolved().decision(), v1::ABORT);
}

TEST_F(Approvals, AClientThatDisconnectsWhileWaitingAbortsItsRequest) {
  auto call = exec_async(agent_, exec_request(ws(), {"mkdir", "gone"}));
  auto request = reviewer_->added();
  call->cancel();
  auto resolved = reviewer_->resolved();
  EXPECT_EQ(resolved.approval_id(), request.approval_id());
  EXPECT_EQ(resolved.resolution_source(), "requester_disconnected");
  EXPECT_EQ(resolved.decision(), v1::ABORT);
  EXPECT_FALSE(resolved.has_resolved_by_uid());
  ASSERT_TRUE(call->wait());
  EXPECT_EQ(call->status().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(reviewer_->resolve(request.approval_id(), v1::APPROVED).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(reviewer_->client().list().empty());
  EXPECT_FALSE(exists(ws("gone")));
}

TEST_F(Approvals, RequireEscalatedUnderNeverOrUntrustedIsRejectedBeforeAnythingRuns) {
  Client never(daemon_, "never");
  for (const Client* c : {&agent_, &never}) {
    auto req = exec_request(ws(), {"mkdir", "escalated-" + c->agent_id()});
    req.set_sandbox_permissions(v1::REQUIRE_ESCALATED);
    req.set_justification("please");
    auto res = c->exec_ok(req);
    ASSERT_TRUE(res.has_rejection()) << c->agent_id();
    EXPECT_EQ(res.rejection().reason(), v1::Rejection::ESCALATION_NOT_ALLOWED);
    EXPECT_THAT(res.text(), HasSubstr("you should not ask for escalated permissions"));
    EXPECT_FALSE(exists(ws("escalated-" + c->agent_id())));
  }
  expect_no_event_before_fence(*reviewer_, agent_, ws());
}

TEST_F(Approvals, RequireEscalatedUnderOnRequestAsksAndRunsUnsandboxedOnlyWhenApproved) {
  const std::string outside = outside_.path() + "/escalated";
  auto req = exec_request(ws(), {"cp", "/etc/hostname", outside});
  req.set_sandbox_permissions(v1::REQUIRE_ESCALATED);
  req.set_justification("copy the hostname out");
  auto call = exec_async(onreq_, req);
  auto request = reviewer_->added();
  EXPECT_EQ(request.reason().kind(), v1::ApprovalReason::ESCALATION);
  EXPECT_EQ(request.reason().justification(), "copy the hostname out");
  EXPECT_EQ(request.sandbox().backend(), v1::SANDBOX_NONE);
  ASSERT_TRUE(reviewer_->resolve(request.approval_id(), v1::APPROVED).ok());
  ASSERT_TRUE(call->wait());
  EXPECT_EQ(call->response().sandbox(), v1::SANDBOX_NONE);
  EXPECT_EQ(call->response().exit_code(), 0) << call->response().output();
  EXPECT_TRUE(exists(outside));
}

TEST_F(Approvals, CheckPolicyReturnsTheRequirement) {
  struct Case {
    const Client* client;
    std::vector<std::string> argv;
    bool escalate;
    v1::ApprovalRequirement::Kind kind;
    bool bypass;
    std::string policy;
  };
  const std::vector<Case> cases = {
      {&agent_, {"rm", "-rf", "precious"}, false, v1::ApprovalRequirement::FORBIDDEN, false, "untrusted"},
      {&agent_, {"mkdir", "x"}, false, v1::ApprovalRequirement::NEEDS_APPROVAL, false, "untrusted"},
      {&agent_, {"cp", "a", "b"}, false, v1::ApprovalRequirement::NEEDS_APPROVAL, false, "untrusted"},
      {&agent_, {"ls"}, false, v1::ApprovalRequirement::SKIP, false, "untrusted"},
      {&agent_, {"touch", "x"}, false, v1::ApprovalRequirement::SKIP, true, "untrusted"},
      {&onreq_, {"cp", "a", "b"}, false, v1::ApprovalRequirement::SKIP, false, "on-request"},
      {&onreq_, {"cp", "a", "b"}, true, v1::ApprovalRequirement::NEEDS_APPROVAL, false, "on-request"},
  };
  for (const auto& c : cases) {
    v1::CheckPolicyRequest req;
    for (const auto& a : c.argv) req.add_argv(a);
    req.set_workdir(ws());
    if (c.escalate) req.set_sandbox_permissions(v1::REQUIRE_ESCALATED);
    v1::CheckPolicyResponse res;
    ASSERT_TRUE(c.client->check(req, &res).ok());
    EXPECT_EQ(res.requirement().kind(), c.kind) << c.argv[0] << " as " << c.client->agent_id();
    EXPECT_EQ(res.requirement().bypass_sandbox(), c.bypass) << c.argv[0];
    EXPECT_EQ(res.approval_policy(), c.policy);
  }
  v1::CheckPolicyRequest forbidden;
  forbidden.add_argv("rm");
  forbidden.add_argv("-rf");
  forbidden.add_argv("precious");
  v1::CheckPolicyResponse res;
  ASSERT_TRUE(agent_.check(forbidden, &res).ok());
  ASSERT_GE(res.matched_rules_size(), 1);
  EXPECT_EQ(res.matched_rules(0).justification(), "precious data must never be deleted");
  EXPECT_EQ(res.decision(), v1::FORBIDDEN);
  expect_no_event_before_fence(*reviewer_, agent_, ws());
}

TEST_F(Approvals, DaemonShutdownEndsAPendingRequest) {
  auto call = exec_async(agent_, exec_request(ws(), {"mkdir", "shutdown"}));
  auto request = reviewer_->added();
  EXPECT_EQ(daemon_.stop(), 0);
  auto resolved = reviewer_->resolved();
  EXPECT_EQ(resolved.approval_id(), request.approval_id());
  EXPECT_EQ(resolved.resolution_source(), "shutdown");
  ASSERT_TRUE(call->wait());
  ASSERT_TRUE(call->status().ok()) << call->status().error_message();
  EXPECT_EQ(call->response().rejection().reason(), v1::Rejection::ABORTED);
  EXPECT_THAT(call->response().text(), HasSubstr("shutting down"));
  EXPECT_FALSE(exists(ws("shutdown")));
}

// ---- who may review -------------------------------------------------------------------------

constexpr uid_t kNobody = 65534;

TestDaemonOptions shared_socket_options(const std::string& extra) {
  TestDaemonOptions o = main_options();
  o.socket_mode = "0666";
  o.socket_dir_mode = "0755";
  o.extra_config = extra;
  return o;
}

// A daemon on a socket every uid may reach, its reviewer, and an agent whose `mkdir <name>`
// waits for review; the tests then look at it as uid nobody through codexctl.
class Reviewers : public ::testing::Test {
 protected:
  // Call through ASSERT_NO_FATAL_FAILURE.
  void start_with_pending_mkdir(const std::string& extra_config, const std::string& name) {
    daemon_ = std::make_unique<TestDaemon>(shared_socket_options(extra_config));
    ASSERT_TRUE(daemon_->started()) << daemon_->daemon_log();
    reviewer_ = std::make_unique<Reviewer>(*daemon_);
    reviewer_->synced();
    agent_ = std::make_unique<Client>(*daemon_, "agent-a");
    call_ = exec_async(*agent_, exec_request(daemon_->workspace(), {"mkdir", name}));
    request_ = reviewer_->added();
  }
  ProcessResult codexctl_as_nobody(const std::vector<std::string>& args) const {
    return daemon_->codexctl(args, "", kNobody);
  }

  std::unique_ptr<TestDaemon> daemon_;
  std::unique_ptr<Reviewer> reviewer_;
  std::unique_ptr<Client> agent_;
  std::unique_ptr<PendingExec> call_;
  v1::ApprovalRequest request_;
};

TEST_F(Reviewers, AnotherUidNeitherSeesNorAnswersRequestsItMayNotReview) {
  ASSERT_NO_FATAL_FAILURE(start_with_pending_mkdir("", "not-yours"));
  auto list = codexctl_as_nobody({"approvals"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out, "no pending approvals\n");
  auto approve = codexctl_as_nobody({"approve", request_.approval_id()});
  EXPECT_EQ(approve.exit_code, 1);
  EXPECT_THAT(approve.err, HasSubstr("no pending approval " + request_.approval_id()));
  EXPECT_THAT(approve.err, ::testing::Not(HasSubstr("may not review")));
  EXPECT_FALSE(call_->returned());
  ASSERT_TRUE(reviewer_->resolve(request_.approval_id(), v1::DENIED).ok());
  ASSERT_TRUE(call_->wait());
  EXPECT_EQ(call_->response().rejection().reason(), v1::Rejection::DENIED_BY_REVIEWER);
  EXPECT_FALSE(exists(daemon_->workspace() + "/not-yours"));
}

TEST_F(Reviewers, AConfiguredReviewerUidSeesAndAnswersOthersRequests) {
  ASSERT_NO_FATAL_FAILURE(start_with_pending_mkdir("[approvals]\nreviewer_uids = [65534]\n", "approved-by-nobody"));
  auto list = codexctl_as_nobody({"approvals"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr(request_.approval_id()));
  auto approve = codexctl_as_nobody({"approve", request_.approval_id()});
  EXPECT_EQ(approve.exit_code, 0) << approve.err;
  ASSERT_TRUE(call_->wait());
  EXPECT_EQ(call_->response().exit_code(), 0);
  EXPECT_TRUE(exists(daemon_->workspace() + "/approved-by-nobody"));
  auto resolved = reviewer_->resolved();
  EXPECT_EQ(resolved.resolved_by_uid(), kNobody);
}

// ---- denied-read paths -----------------------------------------------------------------------

class DeniedReadApprovals : public Approvals {
 protected:
  static TestDaemonOptions options() {
    TestDaemonOptions o;
    o.approval_policy = "on-request";
    o.rules = R"(prefix_rule(pattern=["cat"], decision="allow")
prefix_rule(pattern=["fence-cmd"], decision="prompt"))";
    // The daemon's temp dir is created in the TestDaemon constructor, so the secret lives in a
    // fixed place of our own.
    o.sandbox_mode = sandbox_mode_with("workspace-write", "denied_read = [\"" + secret_dir() + "\"]");
    return o;
  }
  // The daemon's temp dir only exists once TestDaemon runs, so the denied directory is ours.
  // Made on first use, removed when the test program ends.
  static std::string secret_dir() {
    static const TempDir dir("codexd-apr-secret", TempLocation::kOutsideTmp);
    dir.make_file("secret.txt", "TOP-SECRET-CONTENT\n");
    return dir.path();
  }
  DeniedReadApprovals() : Approvals(options()) {}
};

TEST_F(DeniedReadApprovals, AnExplicitAllowKeepsTheSandbox) {
  v1::CheckPolicyRequest check;
  check.add_argv("cat");
  check.add_argv(secret_dir() + "/secret.txt");
  v1::CheckPolicyResponse policy;
  ASSERT_TRUE(onreq_.check(check, &policy).ok());
  EXPECT_TRUE(policy.requirement().bypass_sandbox()) << "the policy alone would bypass";

  auto res = onreq_.exec_ok(exec_request(ws(), {"cat", secret_dir() + "/secret.txt"}));
  EXPECT_EQ(res.sandbox(), v1::SANDBOX_LINUX_BWRAP);
  EXPECT_NE(res.exit_code(), 0);
  EXPECT_THAT(res.output(), ::testing::Not(HasSubstr("TOP-SECRET-CONTENT")));
  // Without the sandbox the file is readable (the test would be vacuous otherwise).
  EXPECT_THAT(slurp(secret_dir() + "/secret.txt"), HasSubstr("TOP-SECRET-CONTENT"));
}

TEST_F(DeniedReadApprovals, AnEscalationRequestIsDowngradedToTheSandboxedAttempt) {
  auto req = exec_request(ws(), {"cat", secret_dir() + "/secret.txt"});
  req.set_sandbox_permissions(v1::REQUIRE_ESCALATED);
  req.set_justification("need the secret");
  auto res = onreq_.exec_ok(req);
  EXPECT_FALSE(res.has_rejection());
  EXPECT_EQ(res.sandbox(), v1::SANDBOX_LINUX_BWRAP);
  EXPECT_THAT(res.output(), ::testing::Not(HasSubstr("TOP-SECRET-CONTENT")));
  // A heuristic command escalated: still sandboxed, no question (use_default needs none).
  auto cp = exec_request(ws(), {"cp", secret_dir() + "/secret.txt", ws("copy")});
  cp.set_sandbox_permissions(v1::REQUIRE_ESCALATED);
  auto copied = onreq_.exec_ok(cp);
  EXPECT_EQ(copied.sandbox(), v1::SANDBOX_LINUX_BWRAP);
  EXPECT_THAT(slurp(ws("copy")), ::testing::Not(HasSubstr("TOP-SECRET-CONTENT")));
  expect_no_event_before_fence(*reviewer_, agent_, ws());
}

// ---- timeout and no reviewer ---------------------------------------------------------------

TEST(ApprovalTimeouts, ApprovalTimeoutIsApprovalTimedOut) {
  TestDaemonOptions o;
  o.approval_policy = "untrusted";
  o.extra_config = "[approvals]\ntimeout_ms = 300\n";
  TestDaemon daemon(o);
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  Reviewer reviewer(daemon);
  reviewer.synced();
  Client agent(daemon, "agent-a");
  auto call = exec_async(agent, exec_request(daemon.workspace(), {"mkdir", "late"}));
  auto request = reviewer.added();
  EXPECT_GT(request.expires_at_unix_ms(), request.created_at_unix_ms());
  EXPECT_EQ(request.expires_at_unix_ms() - request.created_at_unix_ms(), 300);
  auto resolved = reviewer.resolved();  // nobody answers
  EXPECT_EQ(resolved.resolution_source(), "timeout");
  EXPECT_FALSE(resolved.has_resolved_by_uid());
  ASSERT_TRUE(call->wait());
  EXPECT_EQ(call->response().rejection().reason(), v1::Rejection::APPROVAL_TIMED_OUT);
  EXPECT_THAT(call->response().rejection().message(), HasSubstr("300 ms"));
  EXPECT_FALSE(exists(daemon.workspace() + "/late"));
  EXPECT_EQ(reviewer.resolve(request.approval_id(), v1::APPROVED).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST(ApprovalTimeouts, WhenNoReviewerRejectWithNoWatcherIsNoReviewer) {
  TestDaemonOptions o;
  o.approval_policy = "untrusted";
  o.extra_config = "[approvals]\nwhen_no_reviewer = \"reject\"\n";
  TestDaemon daemon(o);
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  Client agent(daemon, "agent-a");
  auto res = agent.exec_ok(exec_request(daemon.workspace(), {"mkdir", "nobody"}));
  EXPECT_EQ(res.rejection().reason(), v1::Rejection::NO_REVIEWER);
  EXPECT_FALSE(exists(daemon.workspace() + "/nobody"));
  // With a reviewer watching, the same command waits for it.
  Reviewer reviewer(daemon);
  reviewer.synced();
  auto call = exec_async(agent, exec_request(daemon.workspace(), {"mkdir", "somebody"}));
  auto request = reviewer.added();
  ASSERT_TRUE(reviewer.resolve(request.approval_id(), v1::APPROVED).ok());
  ASSERT_TRUE(call->wait());
  EXPECT_EQ(call->response().exit_code(), 0);
  EXPECT_TRUE(exists(daemon.workspace() + "/somebody"));
}

}  // namespace
}  // namespace codexd::testing::approvals
