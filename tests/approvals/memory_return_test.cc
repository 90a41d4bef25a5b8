// Issue 19 item 10: memory reached at a peak is given back. A burst of large pending
// approvals (64 of a 1 MB argv) raises the daemon's RSS by about a hundred MB; once they are
// answered, the daemon returns what it freed (malloc_trim on the core thread,
// daemon/server/memory_trim.h). Without that, glibc keeps the freed pages and the RSS stays
// near the peak.
//
// Issue 19 item 5 on the way: a pending approval holds its command about once (the plan, the
// policy's assessment and the ticket share one argv), so the burst costs about its commands'
// size, not the 13 MiB per request it cost with a dozen copies each. Bounded with a wide
// margin here; the sharing itself is held by Admission.APendingApprovalHoldsOneCopyOfTheCommand.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "tests/approvals/approvals_test_util.h"
#include "tests/integration/process_probe.h"
#include "tests/support/fs_wait.h"

namespace codexd::testing::approvals {
namespace {

constexpr int kBurst = 64;

// Waits (hang guard) until the log has a line containing `needle`.
bool wait_for_log(const TestDaemon& daemon, const std::string& needle, size_t from) {
  const std::string dir = std::filesystem::path(daemon.log_path()).parent_path().string();
  return wait_for_dir_change(dir, [&] { return daemon.daemon_log().find(needle, from) != std::string::npos; }, kGuard);
}

TEST(MemoryReturn, MemoryOfABurstOfLargeApprovalsIsGivenBackAfterTheyAreAnswered) {
#ifdef CODEXD_SANITIZE
  GTEST_SKIP() << "AddressSanitizer's allocator replaces glibc's heap: mallinfo2 and malloc_trim do not see it";
#endif
  TestDaemon daemon(untrusted_with_pending_cap(kBurst));
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  Reviewer reviewer(daemon);
  reviewer.synced();
  Client agent(daemon, "agent-a");
  const uint64_t before = resident_bytes(daemon.pid());

  std::vector<std::unique_ptr<PendingExec>> calls;
  std::vector<std::string> ids;
  for (int i = 0; i < kBurst; ++i) {
    calls.push_back(exec_async(agent, large_mkdir(daemon.workspace(), i)));
    ids.push_back(reviewer.added().approval_id());
  }
  const uint64_t peak = resident_bytes(daemon.pid());
  // Enough for the trimmer to act on (it trims once 16 MiB are free): the commands alone are 62 MiB.
  ASSERT_GT(peak, before + (32u << 20)) << "the burst did not raise the RSS enough to measure";
  // Measured about 1.3 MiB per request of a 0.97 MiB argv (one reviewer watching); 13.4 MiB before the sharing.
  EXPECT_LT(peak - before, uint64_t{kBurst} * (4u << 20)) << "pending approvals hold several copies of their command again";

  const size_t log_mark = daemon.daemon_log().size();
  for (const auto& id : ids) ASSERT_TRUE(reviewer.resolve(id, v1::DENIED).ok());
  for (auto& call : calls) ASSERT_TRUE(call->wait());
  calls.clear();
  ASSERT_TRUE(wait_for_log(daemon, "returned freed memory to the system", log_mark)) << daemon.daemon_log();
  const uint64_t after = resident_bytes(daemon.pid());
  std::printf("RSS: %llu MiB before the burst, %llu MiB at its peak, %llu MiB after it was answered\n",
              static_cast<unsigned long long>(before >> 20), static_cast<unsigned long long>(peak >> 20),
              static_cast<unsigned long long>(after >> 20));
  // How much comes back depends on the allocator's fragmentation (in runs on this 2-core VM,
  // 20 requests before the sharing: 514 -> 337 MiB, 437 -> 380 MiB, 290 -> 36 MiB; 64 after it:
  // 105 -> 36 MiB), so the figure is printed, not asserted: what the test
  // holds the daemon to is that it trims after the burst (the log line above, absent without
  // the trimmer) and stays up.
  RecordProperty("rss_before_mib", static_cast<int>(before >> 20));
  RecordProperty("rss_peak_mib", static_cast<int>(peak >> 20));
  RecordProperty("rss_after_mib", static_cast<int>(after >> 20));
  v1::CheckPolicyRequest still_up;
  still_up.add_argv("ls");
  v1::CheckPolicyResponse answer;
  EXPECT_TRUE(agent.check(still_up, &answer).ok()) << daemon.daemon_log();
}

}  // namespace
}  // namespace codexd::testing::approvals
