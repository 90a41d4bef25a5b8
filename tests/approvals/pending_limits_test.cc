// Issue 19 item 5 against a real daemon: pending approvals are capped per uid (one more is
// RESOURCE_EXHAUSTED naming the limit), and ListApprovals answers in pages that each stay below
// the 16 MiB message limit, however large the pending requests are.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "tests/approvals/approvals_test_util.h"

namespace codexd::testing::approvals {
namespace {

using ::testing::HasSubstr;

constexpr int kPending = 18;

TEST(PendingApprovalLimits, LargePendingRequestsAreListedInPagesAndOneMoreThanTheCapIsRefused) {
  TestDaemon daemon(untrusted_with_pending_cap(kPending));
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  Reviewer reviewer(daemon);
  reviewer.synced();
  Client agent(daemon, "agent-a");

  // About 18 MB pending: more than one 16 MiB message could carry.
  std::vector<std::unique_ptr<PendingExec>> calls;
  std::vector<std::string> added;
  for (int i = 0; i < kPending; ++i) {
    calls.push_back(exec_async(agent, large_mkdir(daemon.workspace(), i)));
    added.push_back(reviewer.added().approval_id());
  }

  // One more than the cap: refused at once, naming the limit; nothing is asked.
  v1::ExecResult refused;
  grpc::Status over = agent.exec(large_mkdir(daemon.workspace(), kPending), &refused);
  EXPECT_EQ(over.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << over.error_message();
  EXPECT_THAT(over.error_message(), HasSubstr("the limit is 18 per uid (approvals.max_pending_per_uid)"));

  // Every page is answered and below the limit; together they are every pending request,
  // oldest first, each once.
  std::vector<std::string> listed;
  v1::ListApprovalsRequest request;
  int pages = 0;
  do {
    grpc::ClientContext ctx;
    reviewer.client().prepare(ctx);
    v1::ListApprovalsResponse page;
    grpc::Status st = reviewer.client().approvals_stub().ListApprovals(&ctx, request, &page);
    ASSERT_TRUE(st.ok()) << "page " << pages << ": " << st.error_message();
    ASSERT_GT(page.approvals_size(), 0);
    EXPECT_LT(page.ByteSizeLong(), 16u << 20);
    for (const auto& a : page.approvals()) {
      listed.push_back(a.approval_id());
      EXPECT_EQ(a.argv_size(), 1001);
    }
    request.set_page_token(page.next_page_token());
    ++pages;
  } while (!request.page_token().empty() && pages <= kPending);
  EXPECT_GT(pages, 1);
  EXPECT_EQ(listed, added);

  // A token ListApprovals did not make.
  {
    grpc::ClientContext ctx;
    reviewer.client().prepare(ctx);
    v1::ListApprovalsRequest bad;
    bad.set_page_token("not-a-token");
    v1::ListApprovalsResponse page;
    EXPECT_EQ(reviewer.client().approvals_stub().ListApprovals(&ctx, bad, &page).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }

  // An answer makes room for one more.
  ASSERT_TRUE(reviewer.resolve(added[0], v1::DENIED).ok());
  ASSERT_TRUE(calls[0]->wait());
  EXPECT_EQ(reviewer.resolved().approval_id(), added[0]);
  calls.push_back(exec_async(agent, large_mkdir(daemon.workspace(), kPending)));
  EXPECT_EQ(reviewer.added().argv(1).substr(0, 3), "18-");
}

}  // namespace
}  // namespace codexd::testing::approvals
