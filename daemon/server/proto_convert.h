// Daemon values -> codexd.v1 messages.
#pragma once

#include <string_view>

#include "codexd/v1/admin.pb.h"
#include "codexd/v1/approvals.pb.h"
#include "codexd/v1/common.pb.h"
#include "codexd/v1/exec.pb.h"
#include "daemon/exec/session.h"
#include "daemon/orchestrator/approval_broker.h"
#include "daemon/orchestrator/command_runner.h"
#include "daemon/orchestrator/exec_plan.h"

namespace codexd::server {

// Always a real backend (SANDBOX_NONE included), never SANDBOX_BACKEND_UNSPECIFIED: clients
// read the field as "which sandbox", and an unset one would say nothing.
v1::SandboxBackend to_proto(sandbox::Backend backend);
// The same from sandbox::to_string's name (what an approval ticket keeps); an unknown name is
// SANDBOX_NONE.
v1::SandboxBackend backend_to_proto(std::string_view name);
v1::Decision to_proto(policy::Decision decision);
void fill_rule_match(const policy::RuleMatch& match, v1::RuleMatch* out);
void fill_requirement(const policy::ExecRequirement& requirement, v1::ApprovalRequirement* out);
// The sandbox that `spec` and `backend` make, with its backend always set.
void fill_sandbox_summary(const sandbox::SandboxSpec& spec, sandbox::Backend backend, v1::SandboxSummary* out);
void fill_plan(const orchestrator::ExecPlan& plan, v1::ExecPlan* out);
void fill_rejection(const orchestrator::ExecRequest& request, const orchestrator::Rejection& rejection,
                    v1::Rejection* out, std::string* model_text);

v1::Termination to_proto(limits::Termination termination);
void fill_usage(const limits::ResourceUsage& usage, v1::ResourceUsage* out);
void fill_limits_status(const limits::MechanismStatus& status, v1::LimitsStatus* out);
void fill_exec_result(const exec::UnifiedOutcome& outcome, v1::ExecResult* out);
void fill_exec_result(const orchestrator::CommandResult& result, v1::ExecResult* out);
void fill_run_response(const orchestrator::CommandResult& result, v1::RunCommandResponse* out);

void fill_session_info(const exec::Session& session, v1::SessionInfo* out);
void fill_approval(const orchestrator::ApprovalTicket& ticket, v1::ApprovalRequest* out);
void fill_approval_event(const orchestrator::ApprovalEvent& event, v1::ApprovalEvent* out);

}  // namespace codexd::server
