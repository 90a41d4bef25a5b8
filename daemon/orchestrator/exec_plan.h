// The plan for one attempt of one command: what the policy said, what the reviewer said, which
// sandbox applies, and the exact launch. The orchestrator builds it in named stages
// (orchestrator.cc); what it hands out is a `std::shared_ptr<const ExecPlan>` that nothing
// changes afterwards, complete before anything runs, so a dry run can print it. A retry is a
// new plan built from the first one, never an edit of it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/exec/launch_spec.h"
#include "daemon/orchestrator/exec_request.h"
#include "daemon/orchestrator/identity.h"
#include "platform/sandbox/sandbox.h"
#include "policies/requirement.h"

namespace codexd::orchestrator {

// What the review step came to.
enum class ReviewOutcome {
  kNotNeeded,              // the policy did not ask for approval
  kDryRun,                 // approval would be needed; a dry run asks no one
  kCachedForSession,       // approved for the session earlier (same key)
  kApproved,               // a reviewer approved this once
  kApprovedForSession,     // ... and for the rest of the session
  kApprovedWithAmendment,  // ... and the rules now allow the prefix
};
// "none" | "dry_run" | "cached" | "approved" | "approved_for_session" | "approved_execpolicy_amendment"
std::string_view to_string(ReviewOutcome outcome);
// Approved by a reviewer or by the session cache (so a retry needs no second question).
bool is_approval(ReviewOutcome outcome);

// How the command is confined on this attempt.
enum class Confinement {
  kSandboxed,   // the configured sandbox
  kBypassed,    // explicit allow of every segment, an approved escalation, or an approved retry
  kFullAccess,  // the configured mode is danger-full-access
};
std::string_view to_string(Confinement confinement);  // "sandboxed" | "bypassed" | "full_access"

struct ExecPlan {
  ExecRequest request;
  policy::ApprovalPolicy approval_policy;  // what applied to the caller (Config::approval_policy_for)
  policy::ExecRequirement requirement;     // the policy's verdict, with matched rules
  bool assessed = false;                   // `requirement` was evaluated (false: rejected before the policy)
  bool escalation_requested = false;       // require_escalated as asked
  bool escalation_downgraded = false;      // denied-read paths kept the sandbox
  ReviewOutcome review = ReviewOutcome::kNotNeeded;
  bool reviewed = false;                   // a reviewer was asked for this attempt
  double approval_wait_ms = 0;
  std::optional<uid_t> reviewer_uid;       // who answered that question (audit), if anyone did
  std::string reviewer_agent;
  sandbox::SandboxSpec sandbox_spec;
  Confinement confinement = Confinement::kSandboxed;
  sandbox::Backend backend = sandbox::Backend::kNone;  // what runs this attempt
  std::vector<std::string> sandbox_rules;  // human-readable
  RunAs run_as;
  exec::LaunchSpec launch;                 // exactly what is exec'd
  unsigned attempt = 1;

  bool sandbox_bypassed() const { return confinement == Confinement::kBypassed; }
  // The escalation that will really happen (asked for, and not downgraded).
  bool escalates() const { return escalation_requested && !escalation_downgraded; }
};

// The plan as text (dry runs, logs).
std::string describe_plan(const ExecPlan& plan);
std::string requirement_name(const policy::ExecRequirement& requirement);  // skip | skip_bypass_sandbox | needs_approval | forbidden

}  // namespace codexd::orchestrator
