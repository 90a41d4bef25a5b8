// The admission chain (validate -> policy -> approval -> sandbox choice -> launch plan), the
// retry rule after a sandbox denial, and the model-visible rejection texts, driven through the
// real Orchestrator, ApprovalBroker, ApprovalCache and PolicyStore.
#include "daemon/orchestrator/orchestrator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "tests/orchestrator/orchestrator_test_util.h"

namespace codexd::orchestrator {
namespace {

using test::Harness;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Reason = Rejection::Reason;
using Kind = policy::ExecRequirement::Kind;

constexpr const char* kRules = R"(
prefix_rule(pattern=["touch", "allowed"], decision="allow")
prefix_rule(pattern=["echo"], decision="allow")
prefix_rule(pattern=["rm", "-rf", "precious"], decision="forbidden", justification="precious is not to be deleted")
prefix_rule(pattern=["git", "push"], decision="prompt", justification="pushing publishes code")
)";

Harness::Options with(std::string policy, std::string rules = kRules) {
  Harness::Options o;
  o.approval_policy = std::move(policy);
  o.rules = std::move(rules);
  return o;
}

// ---- policy ----------------------------------------------------------------------------------

TEST(Admission, ForbiddenIsRejectedWithTheRulesJustificationAndNobodyIsAsked) {
  Harness h(with("untrusted"));
  ASSERT_TRUE(h.load.ok);
  std::vector<std::string> events;
  h.broker->watch(::geteuid(), [&](const ApprovalEvent& e) { events.push_back(e.kind == ApprovalEvent::Kind::kSynced ? "synced" : "event"); });
  auto a = h.admit(h.request({"rm", "-rf", "precious"}));
  ASSERT_TRUE(a.done()) << "a forbidden command never waits";
  ASSERT_TRUE(a.get().rejection);
  EXPECT_EQ(a.get().rejection->reason, Reason::kForbiddenByPolicy);
  EXPECT_EQ(a.get().rejection->justification, "precious is not to be deleted");
  EXPECT_EQ(a.get().plan->requirement.kind, Kind::kForbidden);
  EXPECT_EQ(h.broker->pending_count(), 0u);
  EXPECT_EQ(events, std::vector<std::string>{"synced"});
  EXPECT_EQ(h.sandbox.plans, 0) << "nothing was even planned";
}

TEST(Admission, ForbiddenInsideAScriptSegmentIsForbiddenForTheWholeScript) {
  Harness h(with("on-request"));
  auto a = h.admit(h.request({"bash", "-lc", "echo hi && rm -rf precious"}));
  ASSERT_TRUE(a.done());
  ASSERT_TRUE(a.get().rejection);
  EXPECT_EQ(a.get().rejection->reason, Reason::kForbiddenByPolicy);
}

TEST(Admission, AnExplicitAllowForEverySegmentBypassesTheSandbox) {
  Harness h(with("untrusted"));
  auto a = h.admit(h.request({"bash", "-lc", "touch allowed && echo done"}));
  ASSERT_TRUE(a.done());
  ASSERT_FALSE(a.get().rejection) << a.get().rejection->message;
  ASSERT_TRUE(a.get().error.ok());
  const ExecPlan& plan = *a.get().plan;
  EXPECT_EQ(plan.requirement.kind, Kind::kSkip);
  EXPECT_TRUE(plan.requirement.bypass_sandbox);
  EXPECT_TRUE(plan.sandbox_bypassed());
  EXPECT_EQ(plan.backend, sandbox::Backend::kNone);
  EXPECT_EQ(plan.launch.sandbox, sandbox::Backend::kNone);
  EXPECT_EQ(plan.launch.argv, (std::vector<std::string>{"bash", "-lc", "touch allowed && echo done"}));
  EXPECT_THAT(plan.launch.executable, HasSubstr("bash"));
  EXPECT_EQ(to_string(plan.review), "none");
}

TEST(Admission, AHeuristicAllowStillRunsSandboxed) {
  Harness h(with("on-request"));
  auto a = h.admit(h.request({"touch", "x"}));
  ASSERT_TRUE(a.done());
  ASSERT_FALSE(a.get().rejection);
  const ExecPlan& plan = *a.get().plan;
  EXPECT_EQ(plan.requirement.kind, Kind::kSkip);
  EXPECT_FALSE(plan.requirement.bypass_sandbox);
  EXPECT_FALSE(plan.sandbox_bypassed());
  EXPECT_EQ(plan.backend, sandbox::Backend::kLinuxBwrap);
  EXPECT_EQ(plan.launch.argv.front(), "/fake/bwrap");
}

TEST(Admission, OnlyOneSegmentAllowedExplicitlyKeepsTheSandbox) {
  Harness h(with("on-request"));
  auto a = h.admit(h.request({"bash", "-lc", "touch allowed && touch other"}));
  ASSERT_TRUE(a.done());
  ASSERT_FALSE(a.get().rejection);
  EXPECT_FALSE(a.get().plan->sandbox_bypassed());
  EXPECT_EQ(a.get().plan->backend, sandbox::Backend::kLinuxBwrap);
}

// ---- approval ----------------------------------------------------------------------------------

TEST(Admission, ApprovalAloneNeverLiftsTheSandbox) {
  Harness h(with("untrusted"));
  auto a = h.admit(h.request({"touch", "x"}));
  ASSERT_FALSE(a.done()) << "untrusted asks for a command that is not known-safe";
  auto pending = h.pending();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].reason.kind, ApprovalReason::Kind::kHeuristic);
  EXPECT_EQ(pending[0].sandbox.backend, "linux-bwrap") << "the reviewer is told it runs sandboxed";
  EXPECT_EQ(pending[0].attempt, 1u);
  EXPECT_EQ(pending[0].agent_id, "agent-a");
  EXPECT_EQ(pending[0].call_id, "call-1");
  EXPECT_EQ(a.pending->approval_id, pending[0].id);
  ASSERT_TRUE(h.answer(pending[0].id, ReviewDecision::kApproved).ok());
  ASSERT_TRUE(a.done());
  ASSERT_FALSE(a.get().rejection);
  EXPECT_EQ(to_string(a.get().plan->review), "approved");
  EXPECT_TRUE(a.get().plan->reviewed);
  EXPECT_FALSE(a.get().plan->sandbox_bypassed());
  EXPECT_EQ(a.get().plan->backend, sandbox::Backend::kLinuxBwrap);
}

// Issue 19 item 5: a pending approval holds its command once. The plan's request, the policy's
// assessment (segment, heuristic match, proposed amendment), the reviewers' ticket and the
// event that hands them the ticket all point at the buffer the request came with, and the
// reason quotes a long command only in part. (A copy anywhere was a megabyte per pending
// request of a 1 MB argv.)
TEST(Admission, APendingApprovalHoldsOneCopyOfTheCommand) {
  Harness h(with("untrusted"));
  std::vector<std::string> words{"mkdir"};
  for (int i = 0; i < 100; ++i) words.push_back(std::string(1000, static_cast<char>('a' + i % 26)));
  ExecRequest request = h.request(words);
  const SharedArgv asked = request.argv;
  std::vector<const ApprovalTicket*> added;
  h.broker->watch(::geteuid(), [&](const ApprovalEvent& e) {
    if (e.kind == ApprovalEvent::Kind::kAdded) added.push_back(e.ticket);
  });
  auto a = h.admit(std::move(request));
  ASSERT_FALSE(a.done());
  const auto refs = h.broker->pending_refs_for(::geteuid());
  ASSERT_EQ(refs.size(), 1u);
  const ApprovalTicket& ticket = *refs[0];
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0], &ticket) << "reviewers are handed the broker's own ticket";
  EXPECT_TRUE(ticket.argv.shares(asked));
  ASSERT_EQ(ticket.matched_rules.size(), 1u);
  EXPECT_TRUE(ticket.matched_rules[0].heuristic);
  EXPECT_TRUE(ticket.matched_rules[0].matched_prefix.shares(asked));
  EXPECT_TRUE(ticket.proposed_amendment.shares(asked));
  EXPECT_LT(ticket.reason.message.size(), 2 * policy::kReasonCommandBytes);
  EXPECT_THAT(ticket.reason.message, HasSubstr("bytes, shown in part) requires approval"));

  const std::string id = ticket.id;
  ASSERT_TRUE(h.answer(id, ReviewDecision::kApproved).ok());
  ASSERT_TRUE(a.done());
  ASSERT_FALSE(a.get().rejection);
  const ExecPlan& plan = *a.get().plan;
  EXPECT_TRUE(plan.request.argv.shares(asked));
  ASSERT_EQ(plan.requirement.segments.size(), 1u);
  EXPECT_TRUE(plan.requirement.segments[0].argv.shares(asked));
  EXPECT_TRUE(plan.requirement.matched_rules[0].matched_prefix.shares(asked));
  ASSERT_TRUE(plan.requirement.proposed_amendment);
  EXPECT_TRUE(plan.requirement.proposed_amendment->shares(asked));
  EXPECT_EQ(plan.launch.argv.back(), words.back()) << "what runs is the command as asked";
}

TEST(Admission, APromptRuleShowsTheRuleAndItsJustification) {
  Harness h(with("on-request"));
  auto a = h.admit(h.request({"git", "push", "origin"}));
  ASSERT_FALSE(a.done());
  auto pending = h.pending();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].reason.kind, ApprovalReason::Kind::kPromptRule);
  EXPECT_EQ(pending[0].reason.justification, "pushing publishes code");
  ASSERT_FALSE(pending[0].matched_rules.empty());
  EXPECT_EQ(pending[0].matched_rules[0].matched_prefix, (std::vector<std::string>{"git", "push"}));
  EXPECT_FALSE(pending[0].matched_rules[0].heuristic);
  ASSERT_TRUE(h.answer(pending[0].id, ReviewDecision::kDenied, "not today").ok());
  ASSERT_TRUE(a.done());
  ASSERT_TRUE(a.get().rejection);
  EXPECT_EQ(a.get().rejection->reason, Reason::kDeniedByReviewer);
  EXPECT_EQ(a.get().rejection->message, "not today");
}

TEST(Admission, EveryNonApprovalEndsInItsOwnRejection) {
  struct Case {
    std::function<void(Harness&, const std::string& id, const Harness::Admission&)> act;
    Reason reason;
    std::string message_part;
  };
  std::vector<Case> cases = {
      {[](Harness& h, const std::string& id, const Harness::Admission&) { ASSERT_TRUE(h.answer(id, ReviewDecision::kDenied).ok()); },
       Reason::kDeniedByReviewer, ""},
      {[](Harness& h, const std::string& id, const Harness::Admission&) { ASSERT_TRUE(h.answer(id, ReviewDecision::kAbort, "stop").ok()); },
       Reason::kAborted, "the reviewer aborted the turn: stop"},
      {[](Harness& h, const std::string&, const Harness::Admission& a) { h.orchestrator->abandon(a.pending); },
       Reason::kAborted, "disconnected"},
      {[](Harness& h, const std::string&, const Harness::Admission&) { h.broker->shutdown(); },
       Reason::kAborted, "shutting down"},
  };
  for (const auto& c : cases) {
    Harness h(with("untrusted"));
    auto a = h.admit(h.request({"touch", "x"}));
    ASSERT_EQ(h.pending().size(), 1u);
    c.act(h, h.pending()[0].id, a);
    ASSERT_TRUE(a.done());
    ASSERT_TRUE(a.get().rejection);
    EXPECT_EQ(a.get().rejection->reason, c.reason) << rejection_reason_name(c.reason);
    EXPECT_THAT(a.get().rejection->message, HasSubstr(c.message_part));
    EXPECT_THAT(rejection_model_text(a.get().plan->request, *a.get().rejection), HasSubstr(c.message_part));
    EXPECT_TRUE(a.pending->finished);
  }
}

TEST(Admission, ApprovalTimeoutIsItsOwnRejection) {
  auto o = with("untrusted");
  o.broker.timeout = std::chrono::milliseconds(20);
  Harness h(o);
  auto a = h.admit(h.request({"touch", "x"}));
  ASSERT_FALSE(a.done());
  ASSERT_TRUE(testing_util::run_until(h.io, [&] { return a.done(); }));
  ASSERT_TRUE(a.get().rejection);
  EXPECT_EQ(a.get().rejection->reason, Reason::kApprovalTimedOut);
  EXPECT_EQ(a.get().rejection->message, "no reviewer answered within 20 ms");
  EXPECT_GT(a.get().plan->approval_wait_ms, 0);
}

TEST(Admission, NoReviewerIsItsOwnRejection) {
  auto o = with("untrusted");
  o.broker.reject_without_reviewer = true;
  Harness h(o);
  auto a = h.admit(h.request({"touch", "x"}));
  ASSERT_TRUE(a.done()) << "nobody is watching: rejected at once";
  ASSERT_TRUE(a.get().rejection);
  EXPECT_EQ(a.get().rejection->reason, Reason::kNoReviewer);
  EXPECT_TRUE(a.pending->finished);
  h.orchestrator->abandon(a.pending);  // harmless afterwards
}

TEST(Admission, AbandonAfterTheAnswerChangesNothing) {
  Harness h(with("untrusted"));
  auto a = h.admit(h.request({"touch", "x"}));
  ASSERT_TRUE(h.answer(h.pending()[0].id, ReviewDecision::kApproved).ok());
  ASSERT_TRUE(a.done());
  h.orchestrator->abandon(a.pending);
  EXPECT_FALSE(a.get().rejection);
}

TEST(Admission, ApprovedForSessionSkipsTheSecondPromptForTheSameCommandOnly) {
  Harness h(with("untrusted"));
  auto first = h.admit(h.request({"touch", "x"}));
  ASSERT_EQ(h.pending().size(), 1u);
  ASSERT_TRUE(h.answer(h.pending()[0].id, ReviewDecision::kApprovedForSession).ok());
  ASSERT_TRUE(first.done());
  EXPECT_EQ(to_string(first.get().plan->review), "approved_for_session");

  // Same command (also spelled as a one-command script): no prompt, still sandboxed.
  for (auto argv : {std::vector<std::string>{"touch", "x"}, std::vector<std::string>{"bash", "-lc", "touch x"}}) {
    auto again = h.admit(h.request(argv));
    ASSERT_TRUE(again.done()) << argv.back();
    ASSERT_FALSE(again.get().rejection);
    EXPECT_EQ(to_string(again.get().plan->review), "cached");
    EXPECT_FALSE(again.get().plan->reviewed);
    EXPECT_EQ(again.get().plan->backend, sandbox::Backend::kLinuxBwrap);
  }
  // Another command, another directory, another agent, a tty: asked again.
  auto other_cmd = h.admit(h.request({"touch", "y"}));
  EXPECT_FALSE(other_cmd.done());
  auto req = h.request({"touch", "x"});
  req.workdir = h.dir.path();
  auto other_dir = h.admit(req);
  EXPECT_FALSE(other_dir.done());
  auto other_agent = h.admit(h.request({"touch", "x"}, "agent-b"));
  EXPECT_FALSE(other_agent.done());
  req = h.request({"touch", "x"});
  req.tty = true;
  auto tty = h.admit(req);
  EXPECT_FALSE(tty.done());
  EXPECT_EQ(h.pending().size(), 4u);
}

TEST(Admission, ApprovedOnceIsNotRemembered) {
  Harness h(with("untrusted"));
  auto first = h.admit(h.request({"touch", "x"}));
  ASSERT_TRUE(h.answer(h.pending()[0].id, ReviewDecision::kApproved).ok());
  ASSERT_TRUE(first.done());
  auto again = h.admit(h.request({"touch", "x"}));
  EXPECT_FALSE(again.done());
}

TEST(Admission, DryRunDoesNotAsk) {
  Harness h(with("untrusted"));
  auto req = h.request({"touch", "x"});
  req.dry_run = true;
  auto a = h.admit(req);
  ASSERT_TRUE(a.done());
  EXPECT_EQ(to_string(a.get().plan->review), "dry_run");
  EXPECT_EQ(h.broker->pending_count(), 0u);
}

TEST(Admission, PerAgentApprovalPolicyOverridesTheDaemonDefault) {
  auto o = with("on-request");
  o.agent_policies = {{"careful", "untrusted"}};
  Harness h(o);
  EXPECT_EQ(h.config.approval_policy_for("careful").kind, policy::ApprovalPolicyKind::kUntrusted);
  EXPECT_EQ(h.config.approval_policy_for("agent-a").kind, policy::ApprovalPolicyKind::kOnRequest);
  auto relaxed = h.admit(h.request({"touch", "x"}, "agent-a"));
  EXPECT_TRUE(relaxed.done());
  EXPECT_EQ(relaxed.get().plan->approval_policy.kind, policy::ApprovalPolicyKind::kOnRequest);
  auto careful = h.admit(h.request({"touch", "x"}, "careful"));
  EXPECT_FALSE(careful.done());
  ASSERT_EQ(h.pending().size(), 1u);
  EXPECT_EQ(h.pending()[0].agent_id, "careful");
}

TEST(Admission, NeverTurnsPromptsIntoForbidden) {
  Harness h(with("never"));
  auto a = h.admit(h.request({"git", "push"}));
  ASSERT_TRUE(a.done());
  ASSERT_TRUE(a.get().rejection);
  EXPECT_EQ(a.get().rejection->reason, Reason::kForbiddenByPolicy);
  EXPECT_EQ(h.broker->pending_count(), 0u);
}

// ---- escalation --------------------------------------------------------------------------------

TEST(Escalation, UnderOnRequestItAsksWithTheModelsJustificationAndRunsUnsandboxed) {
  Harness h(with("on-request"));
  auto req = h.request({"touch", "x"});
  req.require_escalated = true;
  req.justification = "needs to write outside";
  auto a = h.admit(req);
  ASSERT_FALSE(a.done());
  auto pending = h.pending();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].reason.kind, ApprovalReason::Kind::kEscalation);
  EXPECT_EQ(pending[0].reason.justification, "needs to write outside");
  EXPECT_EQ(pending[0].sandbox.backend, "none") << "the reviewer is told it runs WITHOUT the sandbox";
  ASSERT_TRUE(h.answer(pending[0].id, ReviewDecision::kApproved).ok());
  ASSERT_TRUE(a.done());
  ASSERT_FALSE(a.get().rejection);
  EXPECT_TRUE(a.get().plan->sandbox_bypassed());
  EXPECT_EQ(a.get().plan->backend, sandbox::Backend::kNone);
}

TEST(Escalation, DeniedEscalationRunsNothing) {
  Harness h(with("on-request"));
  auto req = h.request({"touch", "x"});
  req.require_escalated = true;
  auto a = h.admit(req);
  ASSERT_TRUE(h.answer(h.pending()[0].id, ReviewDecision::kDenied).ok());
  ASSERT_TRUE(a.done());
  ASSERT_TRUE(a.get().rejection);
  EXPECT_EQ(a.get().rejection->reason, Reason::kDeniedByReviewer);
}

TEST(Escalation, UnderNeverOrUntrustedItIsRejectedBeforeAnythingElse) {
  for (const char* policy : {"never", "untrusted"}) {
    for (bool denied_reads : {false, true}) {
      auto o = with(policy);
      if (denied_reads) o.denied_read = {"/nonexistent-secret"};
      Harness h(o);
      auto req = h.request({"touch", "x"});
      req.require_escalated = true;
      auto a = h.admit(req);
      ASSERT_TRUE(a.done()) << policy;
      ASSERT_TRUE(a.get().rejection) << policy << " denied_reads=" << denied_reads;
      EXPECT_EQ(a.get().rejection->reason, Reason::kEscalationNotAllowed) << policy << " denied_reads=" << denied_reads;
      EXPECT_THAT(a.get().rejection->message, HasSubstr("you should not ask for escalated permissions"));
      EXPECT_EQ(h.broker->pending_count(), 0u);
      EXPECT_EQ(h.sandbox.plans, 0);
    }
  }
}

TEST(Escalation, GranularAllowsItOnlyWithSandboxApproval) {
  {
    Harness h(with("granular"));
    auto req = h.request({"touch", "x"});
    req.require_escalated = true;
    auto a = h.admit(req);
    EXPECT_FALSE(a.done()) << "granular with sandbox_approval asks";
  }
  {
    auto o = with("granular");
    Harness h(o);
    h.config.policy.granular_sandbox_approval = false;
    auto req = h.request({"touch", "x"});
    req.require_escalated = true;
    auto a = h.admit(req);
    ASSERT_TRUE(a.done());
    ASSERT_TRUE(a.get().rejection);
    EXPECT_EQ(a.get().rejection->reason, Reason::kEscalationNotAllowed);
  }
}

// ---- denied-read paths keep the sandbox ------------------------------------------------------

TEST(DeniedRead, AnExplicitAllowKeepsTheSandbox) {
  auto o = with("on-request");
  o.denied_read = {"/nonexistent-secret"};
  Harness h(o);
  auto a = h.admit(h.request({"touch", "allowed"}));
  ASSERT_TRUE(a.done());
  ASSERT_FALSE(a.get().rejection);
  EXPECT_TRUE(a.get().plan->requirement.bypass_sandbox) << "the policy said bypass";
  EXPECT_FALSE(a.get().plan->sandbox_bypassed()) << "but denied-read paths keep the sandbox";
  EXPECT_EQ(a.get().plan->backend, sandbox::Backend::kLinuxBwrap);
}

TEST(DeniedRead, AnEscalationIsDowngradedToTheDefaultSandboxedAttempt) {
  auto o = with("on-request");
  o.denied_read = {"/nonexistent-secret"};
  Harness h(o);
  auto req = h.request({"touch", "x"});
  req.require_escalated = true;
  auto a = h.admit(req);
  ASSERT_TRUE(a.done()) << "downgraded to use_default: a heuristic allow, no prompt";
  ASSERT_FALSE(a.get().rejection);
  EXPECT_TRUE(a.get().plan->escalation_requested);
  EXPECT_TRUE(a.get().plan->escalation_downgraded);
  EXPECT_FALSE(a.get().plan->sandbox_bypassed());
  EXPECT_EQ(a.get().plan->backend, sandbox::Backend::kLinuxBwrap);
}

TEST(DeniedRead, AnApprovedPromptIsStillSandboxed) {
  auto o = with("on-request");
  o.denied_read = {"/nonexistent-secret"};
  Harness h(o);
  auto req = h.request({"git", "push"});
  req.require_escalated = true;
  auto a = h.admit(req);
  ASSERT_EQ(h.pending().size(), 1u);
  EXPECT_EQ(h.pending()[0].sandbox.backend, "linux-bwrap");
  ASSERT_TRUE(h.answer(h.pending()[0].id, ReviewDecision::kApproved).ok());
  ASSERT_TRUE(a.done());
  EXPECT_FALSE(a.get().plan->sandbox_bypassed());
  EXPECT_EQ(a.get().plan->backend, sandbox::Backend::kLinuxBwrap);
}

// ---- sandbox failures ---------------------------------------------------------------------------

TEST(SandboxFailure, NoUsableBackendIsSandboxUnavailableNeverAnUnsandboxedRun) {
  Harness h(with("on-request"));
  h.sandbox.fail = true;
  auto a = h.admit(h.request({"touch", "x"}));
  ASSERT_TRUE(a.done());
  ASSERT_TRUE(a.get().rejection);
  EXPECT_EQ(a.get().rejection->reason, Reason::kSandboxUnavailable);
  EXPECT_THAT(a.get().rejection->message, HasSubstr("no sandbox on this machine"));
}

TEST(SandboxFailure, AWritableRootInsideProcIsSandboxUnavailable) {
  auto o = with("on-request");
  o.writable_roots = {"/proc/self"};
  Harness h(o);
  auto a = h.admit(h.request({"touch", "x"}));
  ASSERT_TRUE(a.done());
  ASSERT_TRUE(a.get().rejection);
  EXPECT_EQ(a.get().rejection->reason, Reason::kSandboxUnavailable);
  EXPECT_THAT(a.get().rejection->message, HasSubstr("host kernel state"));
}

TEST(SandboxFailure, AnUnresolvableProgramWithoutTheSandboxIsSpawnFailed) {
  Harness h(with("on-request", R"(prefix_rule(pattern=["no-such-program-xyz"], decision="allow"))"));
  auto a = h.admit(h.request({"no-such-program-xyz"}));
  ASSERT_TRUE(a.done());
  ASSERT_TRUE(a.get().rejection);
  EXPECT_EQ(a.get().rejection->reason, Reason::kSpawnFailed);
}

TEST(Admission, AMissingWorkdirIsAnErrorNotARejection) {
  Harness h(with("on-request"));
  auto req = h.request({"touch", "x"});
  req.workdir = h.dir.path() + "/missing";
  auto a = h.admit(req);
  ASSERT_TRUE(a.done());
  EXPECT_FALSE(a.get().rejection);
  EXPECT_EQ(a.get().error.code(), StatusCode::kInvalidArgument) << a.get().error.message();
}

// ---- the retry rule -------------------------------------------------------------------------------

struct RetryCase {
  std::string policy;
  bool granular_sandbox = true;
  bool denied_reads = false;
  bool likely = true, timed_out = false, signaled = false;
  sandbox::Backend backend = sandbox::Backend::kLinuxBwrap;
  unsigned attempt = 1;
  bool expected;
};

TEST(RetryRule, OnlyALikelyDenialUnderAPolicyThatWantsSandboxApprovalsRetries) {
  const std::vector<RetryCase> cases = {
      {.policy = "untrusted", .expected = true},
      {.policy = "granular", .expected = true},
      {.policy = "granular", .granular_sandbox = false, .expected = false},
      {.policy = "on-request", .expected = false},
      {.policy = "never", .expected = false},
      {.policy = "untrusted", .likely = false, .expected = false},
      {.policy = "untrusted", .timed_out = true, .expected = false},
      {.policy = "untrusted", .signaled = true, .expected = false},
      {.policy = "untrusted", .denied_reads = true, .expected = false},
      {.policy = "untrusted", .backend = sandbox::Backend::kNone, .expected = false},
      {.policy = "untrusted", .attempt = 2, .expected = false},
      {.policy = "untrusted", .backend = sandbox::Backend::kLinuxLandlock, .expected = true},
  };
  for (const auto& c : cases) {
    Harness h(with(c.policy));
    h.config.policy.granular_sandbox_approval = c.granular_sandbox;
    ExecPlan plan;
    plan.approval_policy = h.config.approval_policy_for("agent-a");
    plan.backend = c.backend;
    plan.attempt = c.attempt;
    if (c.denied_reads) plan.sandbox_spec.denied_read = {"/secret"};
    EXPECT_EQ(h.orchestrator->retry_allowed(plan, c.likely, c.timed_out, c.signaled), c.expected)
        << c.policy << " sandbox_approval=" << c.granular_sandbox << " denied_reads=" << c.denied_reads
        << " likely=" << c.likely << " timed_out=" << c.timed_out << " signaled=" << c.signaled
        << " backend=" << sandbox::to_string(c.backend) << " attempt=" << c.attempt;
  }
}

// A first attempt under untrusted for `touch x` (heuristic prompt), answered with `decision`.
std::shared_ptr<const ExecPlan> approved_first(Harness& h, std::optional<ReviewDecision> decision) {
  auto a = h.admit(h.request({"touch", "x"}));
  if (decision) {
    EXPECT_EQ(h.pending().size(), 1u);
    EXPECT_TRUE(h.answer(h.pending()[0].id, *decision).ok());
  }
  EXPECT_TRUE(a.done());
  EXPECT_FALSE(a.get().rejection);
  return a.get().plan;
}

TEST(Retry, AfterAnUnapprovedFirstAttemptTheReviewerIsAskedAndApprovalRunsUnsandboxed) {
  Harness h(with("untrusted"));
  // A known-safe command: attempt 1 needed no prompt, so the retry must ask.
  auto first = h.admit(h.request({"cat", "f"}));
  ASSERT_TRUE(first.done()) << "known-safe under untrusted: no prompt";
  ASSERT_EQ(to_string(first.get().plan->review), "none");
  ASSERT_EQ(first.get().plan->backend, sandbox::Backend::kLinuxBwrap);
  auto retry = h.retry(first.get().plan);
  ASSERT_FALSE(retry.done());
  auto pending = h.pending();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].reason.kind, ApprovalReason::Kind::kSandboxRetry);
  EXPECT_EQ(pending[0].reason.message, "command failed in the sandbox; retry without it?");
  EXPECT_EQ(pending[0].attempt, 2u);
  EXPECT_EQ(pending[0].sandbox.backend, "none");
  ASSERT_TRUE(h.answer(pending[0].id, ReviewDecision::kApproved).ok());
  ASSERT_TRUE(retry.done());
  ASSERT_FALSE(retry.get().rejection);
  EXPECT_EQ(retry.get().plan->attempt, 2u);
  EXPECT_TRUE(retry.get().plan->sandbox_bypassed());
  EXPECT_EQ(retry.get().plan->backend, sandbox::Backend::kNone);
  EXPECT_EQ(retry.get().plan->launch.argv, (std::vector<std::string>{"cat", "f"}));
  EXPECT_TRUE(retry.get().plan->reviewed);
  // The first plan is untouched (the caller still holds it for the audit record).
  EXPECT_EQ(first.get().plan->attempt, 1u);
  EXPECT_EQ(first.get().plan->backend, sandbox::Backend::kLinuxBwrap);
}

TEST(Retry, ADeniedRetryRunsNothing) {
  Harness h(with("untrusted"));
  auto first = h.admit(h.request({"cat", "f"}));
  auto retry = h.retry(first.get().plan);
  ASSERT_EQ(h.pending().size(), 1u);
  ASSERT_TRUE(h.answer(h.pending()[0].id, ReviewDecision::kDenied).ok());
  ASSERT_TRUE(retry.done());
  ASSERT_TRUE(retry.get().rejection);
  EXPECT_EQ(retry.get().rejection->reason, Reason::kDeniedByReviewer);
}

TEST(Retry, AnApprovedFirstAttemptIsNotAskedAgain) {
  for (auto decision : {ReviewDecision::kApproved, ReviewDecision::kApprovedForSession}) {
    Harness h(with("untrusted"));
    auto first = approved_first(h, decision);
    auto retry = h.retry(first);
    ASSERT_TRUE(retry.done()) << review_decision_name(decision);
    EXPECT_EQ(h.broker->pending_count(), 0u);
    ASSERT_FALSE(retry.get().rejection);
    EXPECT_EQ(retry.get().plan->backend, sandbox::Backend::kNone);
    EXPECT_FALSE(retry.get().plan->reviewed);
  }
}

TEST(Retry, ASessionApprovalOfTheRetryCoversTheNextRetryOfTheSameCommand) {
  Harness h(with("untrusted"));
  auto first = h.admit(h.request({"cat", "f"}));
  auto retry = h.retry(first.get().plan);
  ASSERT_TRUE(h.answer(h.pending()[0].id, ReviewDecision::kApprovedForSession).ok());
  ASSERT_TRUE(retry.done());
  // Next call: the same command is now approved for the session, so its retry does not ask.
  auto second = h.admit(h.request({"cat", "f"}));
  ASSERT_TRUE(second.done());
  auto retry2 = h.retry(second.get().plan);
  ASSERT_TRUE(retry2.done());
  EXPECT_EQ(h.broker->pending_count(), 0u);
  EXPECT_FALSE(retry2.get().rejection);
}

TEST(Retry, RetryTimeoutAndAbandonAreRejections) {
  {
    auto o = with("untrusted");
    o.broker.timeout = std::chrono::milliseconds(20);
    Harness h(o);
    auto first = h.admit(h.request({"cat", "f"}));
    auto retry = h.retry(first.get().plan);
    ASSERT_TRUE(testing_util::run_until(h.io, [&] { return retry.done(); }));
    ASSERT_TRUE(retry.get().rejection);
    EXPECT_EQ(retry.get().rejection->reason, Reason::kApprovalTimedOut);
  }
  {
    Harness h(with("untrusted"));
    auto first = h.admit(h.request({"cat", "f"}));
    auto retry = h.retry(first.get().plan);
    h.orchestrator->abandon(retry.pending);
    ASSERT_TRUE(retry.done());
    ASSERT_TRUE(retry.get().rejection);
    EXPECT_EQ(retry.get().rejection->reason, Reason::kAborted);
  }
}

// ---- model-visible rejection texts -----------------------------------------------------------------

TEST(RejectionText, EachReasonReadsDifferentlyAndSaysNothingRan) {
  ExecRequest req;
  req.argv = {"bash", "-lc", "make deploy"};
  req.from_cmd = true;
  const std::vector<Rejection> rejections = {
      {Reason::kForbiddenByPolicy, "blocked", "deploys are manual"},
      {Reason::kDeniedByReviewer, "", ""},
      {Reason::kAborted, "the requesting client disconnected", ""},
      {Reason::kApprovalTimedOut, "no reviewer answered within 100 ms", ""},
      {Reason::kNoReviewer, "no reviewer is watching", ""},
      {Reason::kSpawnFailed, "No such file or directory", ""},
      {Reason::kSandboxUnavailable, "bwrap is missing", ""},
      {Reason::kEscalationNotAllowed, "approval policy is Never; reject command", ""},
  };
  std::set<std::string> texts;
  for (const auto& r : rejections) {
    const std::string text = rejection_model_text(req, r);
    EXPECT_FALSE(text.empty()) << rejection_reason_name(r.reason);
    texts.insert(text);
  }
  EXPECT_EQ(texts.size(), rejections.size()) << "two failure boundaries read the same";

  EXPECT_EQ(rejection_model_text(req, rejections[0]), "`make deploy` rejected: blocked by policy: deploys are manual");
  EXPECT_EQ(rejection_model_text(req, rejections[1]), "rejected by user");
  EXPECT_EQ(rejection_model_text(req, {Reason::kDeniedByReviewer, "use the staging target", ""}),
            "rejected by user: use the staging target");
  EXPECT_THAT(rejection_model_text(req, rejections[2]), HasSubstr("did not run"));
  EXPECT_THAT(rejection_model_text(req, rejections[3]), HasSubstr("timed out"));
  EXPECT_THAT(rejection_model_text(req, rejections[4]), HasSubstr("no reviewer"));
  EXPECT_THAT(rejection_model_text(req, rejections[5]), StartsWith("exec_command failed for `make deploy`"));
  EXPECT_THAT(rejection_model_text(req, rejections[6]), HasSubstr("sandbox unavailable: bwrap is missing"));
  EXPECT_EQ(rejection_model_text(req, rejections[7]), "approval policy is Never; reject command");
  // Without a script, the argv is quoted for the message.
  ExecRequest argv_req;
  argv_req.argv = {"rm", "-rf", "a b"};
  EXPECT_EQ(rejection_model_text(argv_req, {Reason::kForbiddenByPolicy, "", ""}), "`rm -rf 'a b'` rejected: blocked by policy");
}

TEST(RejectionText, ForbiddenByTheApprovalPolicyRatherThanARuleSaysSo) {
  Harness h(with("never"));
  auto a = h.admit(h.request({"git", "push"}));
  ASSERT_TRUE(a.done());
  ASSERT_TRUE(a.get().rejection);
  const std::string text = rejection_model_text(a.get().plan->request, *a.get().rejection);
  EXPECT_EQ(text, "approval required by policy, but AskForApproval is set to Never");
  auto rule = h.admit(h.request({"rm", "-rf", "precious"}));
  ASSERT_TRUE(rule.done());
  EXPECT_NE(rejection_model_text(rule.get().plan->request, *rule.get().rejection), text);
}

TEST(RejectionText, AReviewersAbortReadsDifferentlyFromADisconnect) {
  ExecRequest req;
  req.argv = {"make"};
  EXPECT_NE(rejection_model_text(req, {Reason::kAborted, "the requesting client disconnected", ""}),
            rejection_model_text(req, {Reason::kAborted, "stop the turn", ""}));
}

TEST(RejectionText, ReasonNamesAreStable) {
  EXPECT_STREQ(rejection_reason_name(Reason::kForbiddenByPolicy), "forbidden_by_policy");
  EXPECT_STREQ(rejection_reason_name(Reason::kDeniedByReviewer), "denied_by_reviewer");
  EXPECT_STREQ(rejection_reason_name(Reason::kAborted), "aborted");
  EXPECT_STREQ(rejection_reason_name(Reason::kApprovalTimedOut), "approval_timed_out");
  EXPECT_STREQ(rejection_reason_name(Reason::kNoReviewer), "no_reviewer");
  EXPECT_STREQ(rejection_reason_name(Reason::kSpawnFailed), "spawn_failed");
  EXPECT_STREQ(rejection_reason_name(Reason::kSandboxUnavailable), "sandbox_unavailable");
  EXPECT_STREQ(rejection_reason_name(Reason::kEscalationNotAllowed), "escalation_not_allowed");
}

}  // namespace
}  // namespace codexd::orchestrator
