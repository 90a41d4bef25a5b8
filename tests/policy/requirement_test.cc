// The exec-policy -> requirement table.
#include <gtest/gtest.h>

#include "policies/loader.h"
#include "policies/requirement.h"

namespace codexd::policy {
namespace {

using Kind = ExecRequirement::Kind;

std::shared_ptr<const Policy> policy() {
  static auto p = load_policy_text("r.rules", R"(prefix_rule(pattern=["git", "status"])
prefix_rule(pattern=["git", "push"], decision="prompt", justification="pushes")
prefix_rule(pattern=["npx"], decision="forbidden", justification="no npx")
prefix_rule(pattern=["make"])
)").policy;
  return p;
}

ExecRequirement assess(std::vector<std::string> argv, ApprovalPolicyKind kind,
                       FilesystemPolicyKind fs = FilesystemPolicyKind::kRestricted, bool escalate = false) {
  ExecRequest r;
  r.argv = std::move(argv);
  r.approval.kind = kind;
  r.filesystem = fs;
  r.sandbox_override_requested = escalate;
  r.cwd = "/w";
  r.home = "/h";
  return assess_exec(*policy(), r);
}

TEST(Requirement, RulesDecide) {
  auto allow = assess({"git", "status"}, ApprovalPolicyKind::kOnRequest);
  EXPECT_EQ(allow.kind, Kind::kSkip);
  EXPECT_TRUE(allow.bypass_sandbox);
  auto prompt = assess({"git", "push"}, ApprovalPolicyKind::kOnRequest);
  EXPECT_EQ(prompt.kind, Kind::kNeedsApproval);
  EXPECT_EQ(prompt.reason, "`git push` requires approval: pushes");
  EXPECT_FALSE(prompt.proposed_amendment);  // a rule already matched
  auto forbidden = assess({"npx", "x"}, ApprovalPolicyKind::kUntrusted);
  EXPECT_EQ(forbidden.kind, Kind::kForbidden);
  EXPECT_EQ(forbidden.reason, "`npx x` rejected: no npx");
  ASSERT_EQ(forbidden.matched_rules.size(), 1u);
  EXPECT_EQ(forbidden.matched_rules[0].source, "r.rules:3:1");
}

TEST(Requirement, PromptUnderNeverIsForbidden) {
  auto r = assess({"git", "push"}, ApprovalPolicyKind::kNever);
  EXPECT_EQ(r.kind, Kind::kForbidden);
  EXPECT_EQ(r.reason, "approval required by policy, but AskForApproval is set to Never");
}

TEST(Requirement, Heuristics) {
  EXPECT_EQ(assess({"ls"}, ApprovalPolicyKind::kUntrusted).kind, Kind::kSkip);
  EXPECT_FALSE(assess({"ls"}, ApprovalPolicyKind::kUntrusted).bypass_sandbox);
  EXPECT_EQ(assess({"cargo", "build"}, ApprovalPolicyKind::kUntrusted).kind, Kind::kNeedsApproval);
  EXPECT_EQ(assess({"rm", "-rf", "x"}, ApprovalPolicyKind::kNever).kind, Kind::kForbidden);
  EXPECT_EQ(assess({"rm", "-rf", "x"}, ApprovalPolicyKind::kOnRequest).kind, Kind::kNeedsApproval);
  EXPECT_EQ(assess({"cargo", "build"}, ApprovalPolicyKind::kNever).kind, Kind::kSkip);
  EXPECT_EQ(assess({"cargo", "build"}, ApprovalPolicyKind::kOnRequest).kind, Kind::kSkip);
  EXPECT_EQ(assess({"cargo", "build"}, ApprovalPolicyKind::kOnRequest, FilesystemPolicyKind::kRestricted, true).kind,
            Kind::kNeedsApproval);
  EXPECT_EQ(assess({"cargo", "build"}, ApprovalPolicyKind::kOnRequest, FilesystemPolicyKind::kUnrestricted, true).kind,
            Kind::kSkip);
  auto h = assess({"cargo", "build"}, ApprovalPolicyKind::kUntrusted);
  ASSERT_EQ(h.matched_rules.size(), 1u);
  EXPECT_TRUE(h.matched_rules[0].heuristic);
  ASSERT_TRUE(h.proposed_amendment);
  EXPECT_EQ(*h.proposed_amendment, (std::vector<std::string>{"cargo", "build"}));
}

TEST(Requirement, Granular) {
  ExecRequest r;
  r.argv = {"git", "push"};
  r.approval.kind = ApprovalPolicyKind::kGranular;
  r.approval.rules_approval = false;
  EXPECT_EQ(assess_exec(*policy(), r).kind, Kind::kForbidden);
  r.approval.rules_approval = true;
  EXPECT_EQ(assess_exec(*policy(), r).kind, Kind::kNeedsApproval);
  r.argv = {"cargo", "build"};
  r.sandbox_override_requested = true;
  r.approval.sandbox_approval = false;
  auto g = assess_exec(*policy(), r);
  EXPECT_EQ(g.kind, Kind::kForbidden);
  EXPECT_EQ(g.reason, "approval policy disallowed sandbox approval prompt");
}

TEST(Requirement, ShellScriptsAreSplitAndStrictestWins) {
  auto r = assess({"bash", "-lc", "git status && npx x"}, ApprovalPolicyKind::kOnRequest);
  EXPECT_EQ(r.kind, Kind::kForbidden);
  EXPECT_EQ(r.segments.size(), 2u);
  auto both_allowed = assess({"bash", "-lc", "git status && make"}, ApprovalPolicyKind::kOnRequest);
  EXPECT_EQ(both_allowed.kind, Kind::kSkip);
  EXPECT_TRUE(both_allowed.bypass_sandbox);
  auto mixed = assess({"bash", "-lc", "git status && ls"}, ApprovalPolicyKind::kOnRequest);
  EXPECT_EQ(mixed.kind, Kind::kSkip);
  EXPECT_FALSE(mixed.bypass_sandbox);  // ls was allowed by heuristics only
}

TEST(Requirement, Amendments) {
  ExecRequest r;
  r.argv = {"cargo", "build", "--release"};
  r.approval.kind = ApprovalPolicyKind::kUntrusted;
  r.proposed_prefix_rule = std::vector<std::string>{"cargo", "build"};
  EXPECT_EQ(*assess_exec(*policy(), r).proposed_amendment, (std::vector<std::string>{"cargo", "build"}));
  r.argv = {"python3", "-c", "print(1)"};
  r.proposed_prefix_rule = std::vector<std::string>{"python3", "-c"};
  EXPECT_NE(assess_exec(*policy(), r).proposed_amendment, std::optional<std::vector<std::string>>({"python3", "-c"}));
  EXPECT_TRUE(is_banned_prefix({"bash", "-lc"}));
  EXPECT_FALSE(is_banned_prefix({"cargo"}));
}

// Issue 19 item 5: the assessment of a plain command points at the request's argv (its segment,
// its heuristic match, the amendment it proposes) instead of holding copies of it.
TEST(Requirement, TheAssessmentSharesTheRequestsArgv) {
  ExecRequest r;
  r.argv = std::vector<std::string>{"cargo", "build", std::string(5000, 'x')};
  r.approval.kind = ApprovalPolicyKind::kUntrusted;
  ExecRequirement h = assess_exec(*policy(), r);
  ASSERT_EQ(h.kind, Kind::kNeedsApproval);
  ASSERT_EQ(h.segments.size(), 1u);
  EXPECT_TRUE(h.segments[0].argv.shares(r.argv));
  ASSERT_EQ(h.matched_rules.size(), 1u);
  EXPECT_TRUE(h.matched_rules[0].heuristic);
  EXPECT_TRUE(h.matched_rules[0].matched_prefix.shares(r.argv));
  EXPECT_TRUE(h.segments[0].matches[0].matched_prefix.shares(r.argv));
  ASSERT_TRUE(h.proposed_amendment);
  EXPECT_TRUE(h.proposed_amendment->shares(r.argv));
  // A rule's match holds the words it matched, not the command.
  r.argv = std::vector<std::string>{"git", "push", std::string(5000, 'x')};
  ExecRequirement rule = assess_exec(*policy(), r);
  ASSERT_EQ(rule.matched_rules.size(), 1u);
  EXPECT_EQ(rule.matched_rules[0].matched_prefix, (std::vector<std::string>{"git", "push"}));
}

// The reason quotes a command whole up to kReasonCommandBytes of rendering, and in part,
// saying so, beyond.
TEST(Requirement, AReasonQuotesALongCommandInPart) {
  EXPECT_EQ(command_for_reason({"touch", "a b", "it's"}), "`touch 'a b' \"it's\"`");
  const std::string fits(kReasonCommandBytes - 3, 'x');  // "rm " + fits is exactly the bound
  EXPECT_EQ(command_for_reason({"rm", fits}), "`rm " + fits + "`");
  const std::string big = command_for_reason({"rm", fits + "y"});
  EXPECT_EQ(big, "`rm " + fits + "…` (" + std::to_string(kReasonCommandBytes + 1) + " bytes, shown in part)");

  std::vector<std::string> huge{"mkdir"};
  for (int i = 0; i < 1000; ++i) huge.push_back(std::string(990, 'a'));
  const std::string text = command_for_reason(huge);
  EXPECT_LT(text.size(), kReasonCommandBytes + 64);
  EXPECT_EQ(text.rfind("`mkdir aaa", 0), 0u) << text.substr(0, 40);
  EXPECT_NE(text.find("…` (" + std::to_string(5 + 1000 * 991) + " bytes, shown in part)"), std::string::npos);

  // The cut never splits a UTF-8 character. Rendered "'ab" + "é"... (quoted), each é two
  // bytes from an odd offset: the bound falls inside one.
  std::string accents = "ab";
  while (accents.size() < kReasonCommandBytes + 8) accents += "\xc3\xa9";
  const std::string cut = command_for_reason({accents});
  const std::string shown = cut.substr(1, cut.find("…") - 1);
  EXPECT_EQ(shown.size(), kReasonCommandBytes - 1) << "one byte short: the é the bound splits is left out";
  EXPECT_EQ(shown, ("'" + accents).substr(0, kReasonCommandBytes - 1));

}

TEST(Requirement, EscalationGuard) {
  ApprovalPolicy never;
  never.kind = ApprovalPolicyKind::kNever;
  EXPECT_EQ(escalation_not_allowed_message(never),
            "approval policy is Never; reject command — you should not ask for escalated permissions if the approval policy is Never");
}

}  // namespace
}  // namespace codexd::policy
