#include "daemon/orchestrator/exec_plan.h"

#include "base/shell_quote.h"

#include <sstream>

namespace codexd::orchestrator {

std::string requirement_name(const policy::ExecRequirement& requirement) {
  switch (requirement.kind) {
    case policy::ExecRequirement::Kind::kSkip: return requirement.bypass_sandbox ? "skip_bypass_sandbox" : "skip";
    case policy::ExecRequirement::Kind::kNeedsApproval: return "needs_approval";
    case policy::ExecRequirement::Kind::kForbidden: return "forbidden";
  }
  return "unknown";
}

std::string describe_plan(const ExecPlan& plan) {
  std::ostringstream out;
  out << "command:     " << shell_join(plan.request.argv) << "\n";
  out << "workdir:     " << plan.request.workdir << "\n";
  out << "run as:      uid " << plan.run_as.uid << " gid " << plan.run_as.gid << "\n";
  out << "policy:      " << requirement_name(plan.requirement) << " under " << policy::approval_policy_name(plan.approval_policy);
  if (!plan.requirement.reason.empty()) out << " (" << plan.requirement.reason << ")";
  out << "\n";
  for (const auto& m : plan.requirement.matched_rules) {
    out << "  rule:      ";
    for (size_t i = 0; i < m.matched_prefix.size(); ++i) out << (i ? " " : "") << m.matched_prefix[i];
    out << " -> " << policy::decision_name(m.decision);
    if (m.heuristic) out << " (heuristic)";
    if (!m.source.empty()) out << " at " << m.source;
    out << "\n";
  }
  out << "approval:    " << plan.review << "\n";
  out << "sandbox:     " << sandbox::to_string(plan.backend) << " (" << sandbox::to_string(plan.sandbox_spec.mode) << ")";
  if (plan.sandbox_bypassed) out << " bypassed";
  if (plan.escalation_downgraded) out << " [escalation downgraded: denied-read paths keep the sandbox]";
  out << "\n";
  for (const auto& r : plan.sandbox_rules) out << "  " << r << "\n";
  out << "launch:      " << shell_join(plan.launch.argv) << "\n";
  out << "environment: " << plan.launch.env.size() << " variables\n";
  return out.str();
}

}  // namespace codexd::orchestrator
