// What reviewers receive: an ApprovalTicket / ApprovalEvent as the Approvals service sends it.
#include "daemon/server/proto_convert.h"

#include <gtest/gtest.h>

#include "platform/sandbox/sandbox.h"

namespace codexd::server {
namespace {

orchestrator::ApprovalTicket ticket_with_backend(sandbox::Backend backend) {
  orchestrator::ApprovalTicket t;
  t.id = "apr_0123456789abcdef";
  t.requester_uid = 1000;
  t.agent_id = "agent-a";
  t.argv = {"mkdir", "x"};
  t.workdir = "/w";
  t.reason = {orchestrator::ApprovalReason::Kind::kSandboxRetry, "command failed in the sandbox; retry without it?", ""};
  t.sandbox.backend = std::string(sandbox::to_string(backend));
  t.sandbox.mode = "workspace-write";
  t.attempt = 2;
  return t;
}

TEST(ApprovalToProto, TheSandboxThatWouldApplyKeepsItsBackend) {
  // A reviewer is told which sandbox applies if approved: every backend must survive the
  // conversion (a sandboxed command shown as SANDBOX_NONE reads as "runs unsandboxed").
  const std::pair<sandbox::Backend, v1::SandboxBackend> cases[] = {
      {sandbox::Backend::kNone, v1::SANDBOX_NONE},
      {sandbox::Backend::kLinuxBwrap, v1::SANDBOX_LINUX_BWRAP},
      {sandbox::Backend::kLinuxLandlock, v1::SANDBOX_LINUX_LANDLOCK},
      {sandbox::Backend::kMacosSeatbelt, v1::SANDBOX_MACOS_SEATBELT},
      {sandbox::Backend::kWindowsRestrictedToken, v1::SANDBOX_WINDOWS_RESTRICTED_TOKEN},
  };
  for (const auto& [backend, expected] : cases) {
    v1::ApprovalRequest out;
    fill_approval(ticket_with_backend(backend), &out);
    EXPECT_EQ(out.sandbox().backend(), expected) << sandbox::to_string(backend);
  }
}

TEST(ApprovalToProto, TicketFieldsAndReason) {
  v1::ApprovalRequest out;
  fill_approval(ticket_with_backend(sandbox::Backend::kLinuxBwrap), &out);
  EXPECT_EQ(out.approval_id(), "apr_0123456789abcdef");
  EXPECT_EQ(out.requester_uid(), 1000u);
  EXPECT_EQ(out.agent_id(), "agent-a");
  EXPECT_EQ(out.argv_size(), 2);
  EXPECT_EQ(out.reason().kind(), v1::ApprovalReason::SANDBOX_RETRY);
  EXPECT_EQ(out.attempt(), 2u);
  EXPECT_EQ(out.sandbox().mode(), "workspace-write");
  EXPECT_EQ(out.expires_at_unix_ms(), 0) << "no timeout: never expires";
}

TEST(ApprovalToProto, ResolvedEventsNameTheirSource) {
  orchestrator::ApprovalEvent e;
  e.kind = orchestrator::ApprovalEvent::Kind::kResolved;
  e.approval_id = "apr_1";
  e.outcome.kind = orchestrator::ApprovalOutcome::Kind::kRequesterGone;
  e.outcome.decision = orchestrator::ReviewDecision::kAbort;
  v1::ApprovalEvent out;
  fill_approval_event(e, &out);
  ASSERT_TRUE(out.has_resolved());
  EXPECT_EQ(out.resolved().resolution_source(), "requester_disconnected");
  EXPECT_EQ(out.resolved().decision(), v1::ABORT);
  EXPECT_FALSE(out.resolved().has_resolved_by_uid());
  e.outcome.kind = orchestrator::ApprovalOutcome::Kind::kDecided;
  e.outcome.decision = orchestrator::ReviewDecision::kApprovedForSession;
  e.outcome.resolved_by = 0;
  fill_approval_event(e, &out);
  EXPECT_EQ(out.resolved().decision(), v1::APPROVED_FOR_SESSION);
  ASSERT_TRUE(out.resolved().has_resolved_by_uid());
  EXPECT_EQ(out.resolved().resolved_by_uid(), 0u);
}

// SandboxBackend's 0 is UNSPECIFIED, which the daemon never sends: a result where nothing ran
// says SANDBOX_NONE explicitly, not the backend that would have run.
TEST(ResultToProto, ARejectionSaysNoSandboxExplicitly) {
  auto plan = std::make_shared<orchestrator::ExecPlan>();
  plan->backend = sandbox::Backend::kLinuxBwrap;
  orchestrator::CommandResult result;
  result.plan = plan;
  result.rejection = orchestrator::Rejection{orchestrator::Rejection::Reason::kForbiddenByPolicy, "forbidden", ""};
  v1::ExecResult exec;
  fill_exec_result(result, &exec);
  EXPECT_EQ(exec.sandbox(), v1::SANDBOX_NONE);
  EXPECT_EQ(exec.rejection().reason(), v1::Rejection::FORBIDDEN_BY_POLICY);
  v1::RunCommandResponse run;
  fill_run_response(result, &run);
  EXPECT_EQ(run.sandbox(), v1::SANDBOX_NONE);
}

TEST(ResultToProto, BackendNamesMapToRealBackendsOnly) {
  for (auto backend : {sandbox::Backend::kNone, sandbox::Backend::kLinuxBwrap, sandbox::Backend::kLinuxLandlock,
                       sandbox::Backend::kMacosSeatbelt, sandbox::Backend::kWindowsRestrictedToken}) {
    EXPECT_NE(to_proto(backend), v1::SANDBOX_BACKEND_UNSPECIFIED) << sandbox::to_string(backend);
    EXPECT_EQ(backend_to_proto(sandbox::to_string(backend)), to_proto(backend)) << sandbox::to_string(backend);
  }
  EXPECT_EQ(backend_to_proto("no-such-backend"), v1::SANDBOX_NONE);
  EXPECT_EQ(backend_to_proto(""), v1::SANDBOX_NONE);
}

}  // namespace
}  // namespace codexd::server
