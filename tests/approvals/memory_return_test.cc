// Issue 19 item 10: memory reached at a peak is given back. A burst of large pending
// approvals raises the daemon's RSS by a few hundred MB; once they are answered, the daemon
// returns what it freed (malloc_trim on the core thread, daemon/server/memory_trim.h). Without
// that, glibc keeps the freed pages and the RSS stays near the peak.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "tests/approvals/approvals_test_util.h"
#include "tests/integration/process_probe.h"
#include "tests/support/fs_wait.h"

namespace codexd::testing::approvals {
namespace {

constexpr int kBurst = 20;

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
  ASSERT_GT(peak, before + (64u << 20)) << "the burst did not raise the RSS enough to measure";

  const size_t log_mark = daemon.daemon_log().size();
  for (const auto& id : ids) ASSERT_TRUE(reviewer.resolve(id, v1::DENIED).ok());
  for (auto& call : calls) ASSERT_TRUE(call->wait());
  calls.clear();
  ASSERT_TRUE(wait_for_log(daemon, "returned freed memory to the system", log_mark)) << daemon.daemon_log();
  const uint64_t after = resident_bytes(daemon.pid());
  std::printf("RSS: %llu MiB before the burst, %llu MiB at its peak, %llu MiB after it was answered\n",
              static_cast<unsigned long long>(before >> 20), static_cast<unsigned long long>(peak >> 20),
              static_cast<unsigned long long>(after >> 20));
  // How much comes back depends on the allocator's fragmentation (in runs on this 2-core VM:
  // 514 -> 337 MiB, 437 -> 380 MiB), so the figure is printed, not asserted: what the test
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
