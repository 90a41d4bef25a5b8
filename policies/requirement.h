// Exec policy -> approval requirement (Codex core's exec_policy.rs): split the command into
// segments, decide each (rules, else heuristics), take the strictest, and map it under the
// approval policy to SKIP / NEEDS_APPROVAL / FORBIDDEN.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/shared_argv.h"
#include "policies/policy.h"

namespace codexd::policy {

enum class ApprovalPolicyKind { kUntrusted, kOnRequest, kNever, kGranular };

struct ApprovalPolicy {
  ApprovalPolicyKind kind = ApprovalPolicyKind::kOnRequest;
  // Granular only: may the user be asked for sandbox/escalation prompts, for rule prompts.
  bool sandbox_approval = true;
  bool rules_approval = true;
};

enum class FilesystemPolicyKind { kRestricted, kUnrestricted, kExternal };

struct ExecRequest {
  SharedArgv argv;  // the caller's command, shared (segments and matches point into it, not copy it)
  ApprovalPolicy approval;
  FilesystemPolicyKind filesystem = FilesystemPolicyKind::kRestricted;
  bool sandbox_override_requested = false;  // require_escalated or with_additional_permissions
  std::optional<std::vector<std::string>> proposed_prefix_rule;  // the model's prefix_rule
  std::string cwd;
  std::string home;
};

struct SegmentAssessment {
  SharedArgv argv;  // the request's own argv when it is not a shell script
  Decision decision = Decision::kAllow;
  std::vector<RuleMatch> matches;  // rule matches, or one heuristic match when no rule matched
  bool matched_rule = false;
};

struct ExecRequirement {
  enum class Kind { kSkip, kNeedsApproval, kForbidden };
  Kind kind = Kind::kSkip;
  bool bypass_sandbox = false;  // kSkip: every segment matched an explicit allow rule
  // kNeedsApproval / kForbidden. Quotes the command, in part when it is long
  // (command_for_reason): the whole of a 1 MB command is in the request, not here again.
  std::string reason;
  std::optional<SharedArgv> proposed_amendment;  // allow prefix_rule to offer
  std::vector<SegmentAssessment> segments;
  std::vector<RuleMatch> matched_rules;  // all segments' matches, in order
};

// The commands the policy looks at: the plain commands of a bash/zsh/sh -c|-lc script
// (exec-policy variant), or argv itself.
// argv itself is shared, not copied.
std::vector<SharedArgv> commands_for_exec_policy(const SharedArgv& argv, bool* used_complex_parsing);

// The command as a reason text quotes it: "`" + shlex_join(argv) + "`" when the rendering is
// at most kReasonCommandBytes; else "`" + its first kReasonCommandBytes or fewer (cut at a
// UTF-8 character boundary) + "…` (N bytes, shown in part)", N the whole rendering's size, so
// that no reader takes the part for the whole (reviewers get the argv itself as well).
inline constexpr size_t kReasonCommandBytes = 4096;
std::string command_for_reason(const std::vector<std::string>& argv);

ExecRequirement assess_exec(const Policy& policy, const ExecRequest& request);

// Amendments Codex never proposes (bare interpreters and shells).
bool is_banned_prefix(const std::vector<std::string>& prefix);

// "Escalation guard": the message for require_escalated under a policy other than on-request.
std::string escalation_not_allowed_message(const ApprovalPolicy& approval);

// "untrusted" | "on-request" | "never" | "granular": the words of the config and the API.
const char* approval_policy_name(ApprovalPolicyKind kind);
const char* approval_policy_name(const ApprovalPolicy& approval);
// The inverse of approval_policy_name; nullopt for any other word.
std::optional<ApprovalPolicyKind> parse_approval_policy_kind(std::string_view name);
inline constexpr ApprovalPolicyKind kApprovalPolicyKinds[] = {ApprovalPolicyKind::kUntrusted, ApprovalPolicyKind::kOnRequest,
                                                              ApprovalPolicyKind::kNever, ApprovalPolicyKind::kGranular};

}  // namespace codexd::policy
