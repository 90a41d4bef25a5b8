// The Exec and Approvals services' checks of the calls on a session or an approval, each a
// whole request (daemon/server/request_validation.h): what the handlers run first.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/server/request_validation.h"

namespace codexd::server {
namespace {

using ::testing::HasSubstr;

TEST(SessionCallValidation, CancelTakesAGraceOfAtMostAMinute) {
  v1::CancelRequest request;
  request.set_session_id(3);
  auto unset = validate_cancel(request);
  ASSERT_TRUE(unset.ok()) << unset.status().message();
  EXPECT_EQ(unset->grace, std::chrono::milliseconds(2000));
  EXPECT_EQ(unset->mode, exec::ExecEngine::CancelMode::kTerminate);
  request.set_grace_ms(0);
  request.set_mode(v1::CancelRequest::KILL);
  auto zero = validate_cancel(request);
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->grace, std::chrono::milliseconds(0));
  EXPECT_EQ(zero->mode, exec::ExecEngine::CancelMode::kKill);
  request.set_grace_ms(60001);
  EXPECT_EQ(validate_cancel(request).status().message(), "`grace_ms` must be at most 60000");
  request.set_session_id(0);
  EXPECT_THAT(validate_cancel(request).status().message(), HasSubstr("`session_id` is required"));
}

TEST(SessionCallValidation, EachCallChecksItsFields) {
  v1::WriteStdinRequest write;
  write.set_session_id(1);
  write.set_max_output_tokens(kMaxOutputTokens + 1);
  EXPECT_THAT(validate_write_stdin(write).message(), HasSubstr("`max_output_tokens` must be at most"));
  v1::PollRequest poll;
  poll.set_session_id(1);
  poll.set_from_offset(5);
  poll.set_max_output_tokens(0);
  EXPECT_THAT(validate_poll(poll).message(), HasSubstr("`from_offset` needs `max_output_tokens` > 0"));
  v1::SendInputRequest input;
  input.set_session_id(1);
  input.set_data(std::string(kMaxStdinBytes + 1, 'x'));
  EXPECT_THAT(validate_send_input(input).message(), HasSubstr("`data` is"));
  v1::ResizeTerminalRequest resize;
  resize.set_session_id(1);
  resize.set_rows(24);
  EXPECT_THAT(validate_resize_terminal(resize).message(), HasSubstr("between 1 and 1000"));
  resize.set_cols(80);
  EXPECT_TRUE(validate_resize_terminal(resize).ok());
}

TEST(ApprovalValidation, ResolveApprovalNeedsAnIdAndADecision) {
  v1::ResolveApprovalRequest request;
  EXPECT_THAT(validate_resolve_approval(request).status().message(), HasSubstr("`approval_id` is required"));
  request.set_approval_id(std::string(65, 'a'));
  EXPECT_THAT(validate_resolve_approval(request).status().message(), HasSubstr("at most 64"));
  request.set_approval_id("a1");
  EXPECT_THAT(validate_resolve_approval(request).status().message(), HasSubstr("(got unset, REVIEW_DECISION_UNSPECIFIED)"));
  request.set_decision(v1::APPROVED_EXECPOLICY_AMENDMENT);
  auto decision = validate_resolve_approval(request);
  ASSERT_TRUE(decision.ok());
  EXPECT_EQ(*decision, orchestrator::ReviewDecision::kApprovedWithAmendment);
}

}  // namespace
}  // namespace codexd::server
