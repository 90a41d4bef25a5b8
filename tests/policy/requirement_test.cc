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

TEST(Requirement, EscalationGuard) {
  ApprovalPolicy never;
  never.kind = ApprovalPolicyKind::kNever;
  EXPECT_EQ(escalation_not_allowed_message(never),
            "approval policy is Never; reject command — you should not ask for escalated permissions if the approval policy is Never");
}

}  // namespace
}  // namespace codexd::policy
