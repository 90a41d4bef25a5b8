#include "policies/requirement.h"

#include <algorithm>

#include "policies/command_safety.h"
#include "policies/shell_split.h"
#include "policies/shlex.h"

namespace codexd::policy {
namespace {

constexpr const char* kNeverPromptReason = "approval required by policy, but AskForApproval is set to Never";
constexpr const char* kSandboxApprovalDisabled = "approval policy disallowed sandbox approval prompt";
constexpr const char* kRulesApprovalDisabled = "approval policy disallowed rule approval prompt";

Decision heuristic_decision(const std::vector<std::string>& argv, const ExecRequest& r, bool complex) {
  ApprovalPolicyKind kind = r.approval.kind;
  if (!complex && kind == ApprovalPolicyKind::kUntrusted && is_known_safe_command(argv)) return Decision::kAllow;
  if (command_might_be_dangerous(argv)) return kind == ApprovalPolicyKind::kNever ? Decision::kForbidden : Decision::kPrompt;
  if (kind == ApprovalPolicyKind::kNever) return Decision::kAllow;
  if (kind == ApprovalPolicyKind::kUntrusted) return Decision::kPrompt;
  // on-request and granular
  if (r.filesystem != FilesystemPolicyKind::kRestricted) return Decision::kAllow;
  return r.sandbox_override_requested ? Decision::kPrompt : Decision::kAllow;
}

// One segment: the policy's rules decide it, else the heuristics (recorded as one
// heuristic match so callers can show what was looked at).
SegmentAssessment assess_segment(const Policy& policy, const SharedArgv& command, const MatchOptions& options,
                                 const ExecRequest& request, bool complex) {
  SegmentAssessment seg;
  seg.argv = command;
  Evaluation e = policy.check(command, options);
  if (e.decision) {
    seg.matched_rule = true;
    seg.decision = *e.decision;
    seg.matches = std::move(e.matched_rules);
  } else {
    seg.decision = heuristic_decision(command, request, complex);
    RuleMatch h;
    h.matched_prefix = command;
    h.decision = seg.decision;
    h.heuristic = true;
    seg.matches.push_back(std::move(h));
  }
  return seg;
}

// What the mapping needs to know about all segments together.
struct SegmentSummary {
  Decision overall = Decision::kAllow;
  bool all_explicit_allow = true;
  bool any_rule_matched = false;
  bool prompt_from_rule = false;
  // Pointers into ExecRequirement::segments, taken once the vector no longer grows.
  const SegmentAssessment* first_heuristic_prompt = nullptr;
  const SegmentAssessment* first_heuristic_allow = nullptr;
};

void tally_segment(SegmentSummary& sum, const SegmentAssessment& seg) {
  if (seg.matched_rule) {
    sum.any_rule_matched = true;
    if (seg.decision == Decision::kPrompt) sum.prompt_from_rule = true;
  }
  if (!(seg.matched_rule && seg.decision == Decision::kAllow)) sum.all_explicit_allow = false;
  sum.overall = strictest(sum.overall, seg.decision);
}

// Flattens the segments' matches into out.matched_rules and finds the first heuristic
// prompt/allow segments (amendment candidates).
void collect_matches(ExecRequirement& out, SegmentSummary& sum) {
  for (const SegmentAssessment& seg : out.segments) {
    out.matched_rules.insert(out.matched_rules.end(), seg.matches.begin(), seg.matches.end());
    if (!seg.matched_rule && seg.decision == Decision::kPrompt && !sum.first_heuristic_prompt) {
      sum.first_heuristic_prompt = &seg;
    }
    if (!seg.matched_rule && seg.decision == Decision::kAllow && !sum.first_heuristic_allow) {
      sum.first_heuristic_allow = &seg;
    }
  }
}

// The forbidden reason: the justification of the longest forbidding rule (the last one on
// ties), else a generic rule or heuristic message.
void set_forbidden(ExecRequirement& out, const ExecRequest& request) {
  out.kind = ExecRequirement::Kind::kForbidden;
  std::optional<std::string> justification;
  size_t longest = 0;
  for (const RuleMatch& m : out.matched_rules) {
    if (m.decision == Decision::kForbidden && !m.heuristic && m.matched_prefix.size() >= longest) {
      longest = m.matched_prefix.size();
      justification = m.justification;
    }
  }
  const std::string command_text = command_for_reason(request.argv);
  if (justification) {
    out.reason = command_text + " rejected: " + *justification;
  } else if (longest > 0) {
    out.reason = command_text + " rejected: blocked by policy";
  } else {
    out.reason = command_text + " rejected: command is dangerous and approval is disabled";
  }
}

// Amendment: the model's own prefix when acceptable, else the first heuristic segment.
void propose_amendment(ExecRequirement& out, const ExecRequest& request, const SegmentSummary& sum, bool complex) {
  if (complex) return;
  auto acceptable = [&](const std::vector<std::string>& prefix) {
    return !prefix.empty() && !is_banned_prefix(prefix) && !sum.any_rule_matched;
  };
  if (request.proposed_prefix_rule && acceptable(*request.proposed_prefix_rule)) {
    out.proposed_amendment = request.proposed_prefix_rule;
  } else if (sum.overall == Decision::kPrompt && sum.first_heuristic_prompt &&
             !is_banned_prefix(sum.first_heuristic_prompt->argv)) {
    out.proposed_amendment = sum.first_heuristic_prompt->argv;
  } else if (sum.overall == Decision::kAllow && sum.first_heuristic_allow &&
             !is_banned_prefix(sum.first_heuristic_allow->argv)) {
    out.proposed_amendment = sum.first_heuristic_allow->argv;
  }
}

// Why a prompt cannot be shown under this approval policy, or nullptr when it can.
const char* prompt_refusal(const ApprovalPolicy& a, bool prompt_from_rule) {
  if (a.kind == ApprovalPolicyKind::kNever) return kNeverPromptReason;
  if (a.kind == ApprovalPolicyKind::kGranular) {
    if (prompt_from_rule && !a.rules_approval) return kRulesApprovalDisabled;
    if (!prompt_from_rule && !a.sandbox_approval) return kSandboxApprovalDisabled;
  }
  return nullptr;
}

// A prompt decision: forbidden when the approval policy disallows the prompt, else
// needs-approval with the last prompting rule's justification.
void set_prompt(ExecRequirement& out, const ExecRequest& request, bool prompt_from_rule) {
  if (const char* refusal = prompt_refusal(request.approval, prompt_from_rule)) {
    out.kind = ExecRequirement::Kind::kForbidden;
    out.reason = refusal;
    out.proposed_amendment.reset();
    return;
  }
  out.kind = ExecRequirement::Kind::kNeedsApproval;
  std::optional<std::string> justification;
  for (const RuleMatch& m : out.matched_rules) {
    if (m.decision == Decision::kPrompt && !m.heuristic && m.justification) justification = m.justification;
  }
  const std::string command_text = command_for_reason(request.argv);
  out.reason = justification ? command_text + " requires approval: " + *justification : command_text + " requires approval";
}

}  // namespace

const char* approval_policy_name(ApprovalPolicyKind kind) {
  switch (kind) {
    case ApprovalPolicyKind::kUntrusted: return "untrusted";
    case ApprovalPolicyKind::kOnRequest: return "on-request";
    case ApprovalPolicyKind::kNever: return "never";
    case ApprovalPolicyKind::kGranular: return "granular";
  }
  return "on-request";
}

const char* approval_policy_name(const ApprovalPolicy& approval) { return approval_policy_name(approval.kind); }

std::optional<ApprovalPolicyKind> parse_approval_policy_kind(std::string_view name) {
  for (ApprovalPolicyKind kind : kApprovalPolicyKinds) {
    if (name == approval_policy_name(kind)) return kind;
  }
  return std::nullopt;
}

std::string escalation_not_allowed_message(const ApprovalPolicy& approval) {
  // Codex formats the policy with Rust Debug (UnlessTrusted, OnRequest, Never, Granular).
  const char* debug = "OnRequest";
  switch (approval.kind) {
    case ApprovalPolicyKind::kUntrusted: debug = "UnlessTrusted"; break;
    case ApprovalPolicyKind::kOnRequest: debug = "OnRequest"; break;
    case ApprovalPolicyKind::kNever: debug = "Never"; break;
    case ApprovalPolicyKind::kGranular: debug = "Granular"; break;
  }
  return std::string("approval policy is ") + debug +
         "; reject command — you should not ask for escalated permissions if the approval policy is " + debug;
}

bool is_banned_prefix(const std::vector<std::string>& prefix) {
  static const std::vector<std::vector<std::string>> kBanned = {
      {"python3"}, {"python3", "-"}, {"python3", "-c"}, {"python"}, {"python", "-"}, {"python", "-c"}, {"py"},
      {"py", "-3"}, {"pythonw"}, {"pyw"}, {"pypy"}, {"pypy3"}, {"git"}, {"bash"}, {"bash", "-lc"}, {"sh"},
      {"sh", "-c"}, {"sh", "-lc"}, {"zsh"}, {"zsh", "-lc"}, {"/bin/zsh"}, {"/bin/zsh", "-lc"}, {"/bin/bash"},
      {"/bin/bash", "-lc"}, {"pwsh"}, {"pwsh", "-Command"}, {"pwsh", "-c"}, {"powershell"},
      {"powershell", "-Command"}, {"powershell", "-c"}, {"powershell.exe"}, {"powershell.exe", "-Command"},
      {"powershell.exe", "-c"}, {"env"}, {"sudo"}, {"node"}, {"node", "-e"}, {"perl"}, {"perl", "-e"}, {"ruby"},
      {"ruby", "-e"}, {"php"}, {"php", "-r"}, {"lua"}, {"lua", "-e"}, {"osascript"},
  };
  return std::find(kBanned.begin(), kBanned.end(), prefix) != kBanned.end();
}

std::vector<SharedArgv> commands_for_exec_policy(const SharedArgv& argv, bool* used_complex_parsing) {
  *used_complex_parsing = false;
  if (auto shell = extract_shell_command(argv)) {
    if (auto commands = parse_commands_for_exec_policy(shell->script)) {
      return std::vector<SharedArgv>(std::make_move_iterator(commands->begin()), std::make_move_iterator(commands->end()));
    }
  }
  return {argv};
}

std::string command_for_reason(const std::vector<std::string>& argv) {
  // shlex_join's rendering, of which at most one byte more than can be shown is kept.
  std::string rendering;
  size_t total = 0;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string quoted = shlex_quote(argv[i]);
    if (i > 0) {
      ++total;
      if (rendering.size() <= kReasonCommandBytes) rendering += ' ';
    }
    total += quoted.size();
    if (rendering.size() <= kReasonCommandBytes) rendering.append(quoted, 0, kReasonCommandBytes + 1 - rendering.size());
  }
  if (total <= kReasonCommandBytes) return "`" + rendering + "`";
  // rendering[cut] is the first byte left out: never the middle of a UTF-8 character.
  size_t cut = kReasonCommandBytes;
  while (cut > 0 && (static_cast<unsigned char>(rendering[cut]) & 0xC0) == 0x80) --cut;
  rendering.resize(cut);
  return "`" + rendering + "…` (" + std::to_string(total) + " bytes, shown in part)";
}

ExecRequirement assess_exec(const Policy& policy, const ExecRequest& request) {
  ExecRequirement out;
  bool complex = false;
  std::vector<SharedArgv> commands = commands_for_exec_policy(request.argv, &complex);
  MatchOptions options;
  options.resolve_host_executables = true;  // exec always resolves host executables
  options.cwd = request.cwd;
  options.home = request.home;

  SegmentSummary sum;
  for (const auto& command : commands) {
    SegmentAssessment seg = assess_segment(policy, command, options, request, complex);
    tally_segment(sum, seg);
    out.segments.push_back(std::move(seg));
  }
  collect_matches(out, sum);

  if (sum.overall == Decision::kForbidden) {
    set_forbidden(out, request);
    return out;
  }
  propose_amendment(out, request, sum, complex);
  if (sum.overall == Decision::kPrompt) {
    set_prompt(out, request, sum.prompt_from_rule);
    return out;
  }
  out.kind = ExecRequirement::Kind::kSkip;
  out.bypass_sandbox = sum.all_explicit_allow;
  return out;
}

}  // namespace codexd::policy
