// The immutable plan for one attempt of one command: what the policy said, what the reviewer
// said, which sandbox applies, and the exact launch. Built and validated whole before
// anything runs, so a dry run can print it.
#pragma once

#include <string>
#include <vector>

#include "daemon/exec/launch_spec.h"
#include "daemon/orchestrator/exec_request.h"
#include "daemon/orchestrator/identity.h"
#include "platform/sandbox/sandbox.h"
#include "policies/requirement.h"

namespace codexd::orchestrator {

struct ExecPlan {
  ExecRequest request;
  policy::ApprovalPolicy approval_policy;  // what applied to the caller (Config::approval_policy_for)
  policy::ExecRequirement requirement;     // the policy's verdict, with matched rules
  bool assessed = false;                   // `requirement` was evaluated (false: rejected before the policy)
  bool escalation_requested = false;       // require_escalated as asked
  bool escalation_downgraded = false;      // denied-read paths kept the sandbox
  // Approval: "none" (not needed), "approved", "approved_for_session", "cached", "dry_run".
  std::string review = "none";
  bool reviewed = false;                   // a reviewer was asked for this attempt
  double approval_wait_ms = 0;
  std::vector<std::string> approval_cache_keys;
  // Sandbox
  sandbox::SandboxSpec sandbox_spec;
  sandbox::Backend backend = sandbox::Backend::kNone;  // what runs this attempt
  bool sandbox_bypassed = false;           // explicit allow / approved escalation / approved retry
  std::vector<std::string> sandbox_rules;  // human-readable
  RunAs run_as;
  exec::LaunchSpec launch;                 // exactly what is exec'd
  unsigned attempt = 1;
};

// The plan as text (dry runs, logs).
std::string describe_plan(const ExecPlan& plan);
std::string requirement_name(const policy::ExecRequirement& requirement);  // skip | skip_bypass_sandbox | needs_approval | forbidden

}  // namespace codexd::orchestrator
