// The hostile-client battery in one run (issue 17): a real daemon, a witness session,
// then garbage on the socket, an HTTP/2 preface followed by garbage, a 100 MB argv, NUL
// bytes, out-of-range numbers, unknown session and approval ids, 200 silent connections, and
// codexctl clients SIGKILLed in the middle of an exec, an attach and an approval wait. Afterwards
// the daemon serves, the witness still runs, and the daemon holds no more sockets and little
// more memory than before. The figures are printed for docs/reliability-style reports.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <functional>

#include "codexd/v1/approvals.grpc.pb.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;

TestDaemonOptions with_a_prompt_rule() {
  TestDaemonOptions options;
  options.rules = "prefix_rule(pattern = [\"touch\", \"asked\"], decision = \"prompt\")\n";
  return options;
}

// Waits (bounded) until `done`: /proc has no event for descriptor counts, and the approval checks
// poll ListApprovals rather than keep a WatchApprovals stream open through the battery.
bool eventually(const std::function<bool()>& done, int tries = 300) {
  for (int i = 0; i < tries; ++i) {
    if (done()) return true;
    ::usleep(100'000);
  }
  return done();
}

class HostileClientTest : public ::testing::Test {
 protected:
  HostileClientTest() : daemon_(with_a_prompt_rule()) {}

  void SetUp() override {
    ASSERT_TRUE(daemon_.started()) << daemon_.daemon_log();
    exec_ = v1::Exec::NewStub(daemon_.channel());
    approvals_ = v1::Approvals::NewStub(daemon_.channel());
  }

  std::vector<std::string> codexctl(std::vector<std::string> args) const {
    args.insert(args.begin(), {TestDaemon::codexctl_binary(), "--socket", daemon_.socket_path()});
    return args;
  }

  size_t pending_approvals() {
    grpc::ClientContext context;
    v1::ListApprovalsResponse response;
    return approvals_->ListApprovals(&context, v1::ListApprovalsRequest(), &response).ok() ? response.approvals_size()
                                                                                        : 0;
  }

  TestDaemon daemon_;
  std::unique_ptr<v1::Exec::Stub> exec_;
  std::unique_ptr<v1::Approvals::Stub> approvals_;
};

void send_raw(const std::string& socket_path, const std::string& bytes) {
  const int fd = connect_unix(socket_path);
  ASSERT_GE(fd, 0);
  (void)!::write(fd, bytes.data(), bytes.size());
  ::close(fd);
}

TEST_F(HostileClientTest, TheDaemonSurvivesEveryHostileClientAndGivesBackWhatItTook) {
  // The witness: a session that must come through untouched.
  auto witness_req = shell_request(daemon_, "echo witness-ready; exec sleep 600", 5'000);
  auto witness = exec_command(*exec_, witness_req);
  ASSERT_TRUE(witness.status.ok() && witness.result.has_session_id()) << describe(witness.status);
  const int witness_id = witness.result.session_id();
  const pid_t daemon = daemon_.pid();
  const size_t sockets_before = open_fd_kinds(daemon)["socket"];
  const size_t fds_before = open_fd_count(daemon);
  const uint64_t rss_before = resident_bytes(daemon);
  const size_t pool_before = open_fd_kinds(daemon)["cgroup file"];

  {
    SCOPED_TRACE("raw garbage and an HTTP/2 preface followed by garbage");
    for (int i = 0; i < 20; ++i) send_raw(daemon_.socket_path(), std::string(64 * 1024, static_cast<char>(0xab)));
    send_raw(daemon_.socket_path(), std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + std::string(8192, '\xff'));
  }
  {
    SCOPED_TRACE("a 100 MB argv");
    grpc::ChannelArguments args;
    args.SetMaxSendMessageSize(128 * static_cast<int>(kMiB));
    auto big = v1::Exec::NewStub(
        grpc::CreateCustomChannel("unix:" + daemon_.socket_path(), grpc::InsecureChannelCredentials(), args));
    auto call = exec_command(*big, argv_request(daemon_, {"echo", std::string(100 * kMiB, 'x')}));
    EXPECT_THAT(call.status.error_code(),
                ::testing::AnyOf(grpc::StatusCode::RESOURCE_EXHAUSTED, grpc::StatusCode::INVALID_ARGUMENT))
        << describe(call.status);
  }
  {
    SCOPED_TRACE("NUL bytes, out-of-range numbers, unknown ids");
    auto nul = exec_command(*exec_, argv_request(daemon_, {"echo", std::string("a\0b", 3)}));
    EXPECT_EQ(nul.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << describe(nul.status);
    for (int id : {-1, 0, INT_MAX}) {
      auto polled = poll(*exec_, id, 0);
      EXPECT_THAT(polled.status.error_code(),
                  ::testing::AnyOf(grpc::StatusCode::INVALID_ARGUMENT, grpc::StatusCode::NOT_FOUND))
          << id << ": " << describe(polled.status);
    }
    auto clamped = exec_command(*exec_, argv_request(daemon_, {"true"}, UINT32_MAX));  // yield: clamped
    EXPECT_TRUE(clamped.status.ok()) << describe(clamped.status);
    auto huge_tokens = argv_request(daemon_, {"true"});
    huge_tokens.set_max_output_tokens(UINT32_MAX);
    auto refused = exec_command(*exec_, huge_tokens);
    EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << describe(refused.status);
    EXPECT_THAT(refused.status.error_message(), ::testing::HasSubstr("at most"));
    grpc::ClientContext context;
    v1::ResolveApprovalRequest resolve;
    resolve.set_approval_id("apr_does_not_exist");
    resolve.set_decision(v1::APPROVED);
    v1::ResolveApprovalResponse resolved;
    EXPECT_EQ(approvals_->ResolveApproval(&context, resolve, &resolved).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  {
    SCOPED_TRACE("200 connections that connect and send nothing");
    std::vector<int> silent;
    for (int i = 0; i < 200; ++i) silent.push_back(connect_unix(daemon_.socket_path()));
    expect_serving(daemon_);
    for (int fd : silent) ::close(fd);
  }
  {
    SCOPED_TRACE("clients killed in the middle of an exec, an attach and an approval wait");
    const size_t sessions = list_sessions(*exec_).size();
    const size_t connections = connection_fd_count(daemon, daemon_.socket_path());
    BackgroundProcess exec_client(codexctl({"exec", "-C", daemon_.workspace(), "--", "sleep", "600"}));
    ASSERT_TRUE(eventually([&] { return list_sessions(*exec_).size() > sessions; }));
    exec_client.kill_and_reap();
    // Its connection is closed before the attach client's is counted.
    ASSERT_TRUE(eventually([&] { return connection_fd_count(daemon, daemon_.socket_path()) <= connections; }));
    BackgroundProcess attach_client(codexctl({"attach", std::to_string(witness_id)}));
    ASSERT_TRUE(eventually([&] { return connection_fd_count(daemon, daemon_.socket_path()) > connections; }));
    attach_client.kill_and_reap();
    BackgroundProcess asking(codexctl({"exec", "--no-prompt", "-C", daemon_.workspace(), "--", "touch", "asked"}));
    ASSERT_TRUE(eventually([&] { return pending_approvals() == 1; }));
    asking.kill_and_reap();
    EXPECT_TRUE(eventually([&] { return pending_approvals() == 0; })) << "the killed client's approval stays pending";
  }

  expect_serving(daemon_);
  // The witness still runs; the session the killed exec client left behind is ended here, so
  // that what is counted below is what the hostile clients left, not a live session.
  for (const v1::SessionInfo& s : list_sessions(*exec_)) {
    if (s.session_id() == witness_id) continue;
    ASSERT_TRUE(cancel(*exec_, s.session_id(), v1::CancelRequest::KILL).ok());
    auto ended = follow_until_exit(*exec_, poll(*exec_, s.session_id(), 0).result);
    EXPECT_TRUE(ended.status.ok()) << describe(ended.status);
  }
  auto still = poll(*exec_, witness_id, 0);
  ASSERT_TRUE(still.status.ok()) << describe(still.status);
  EXPECT_FALSE(still.result.has_exit_code()) << "the witness session ended: " << still.result.DebugString();

  size_t sockets_after = 0;
  EXPECT_TRUE(eventually([&] { return (sockets_after = open_fd_kinds(daemon)["socket"]) <= sockets_before + 2; }))
      << "daemon sockets: " << sockets_before << " before, " << sockets_after << " after";
  const uint64_t rss_peak = resident_bytes(daemon);
  const size_t fds_after = open_fd_count(daemon);
  // The killed exec client was the first command of its agent ("codexctl"): the cgroup pool now
  // keeps a stock of ready groups for it (open cgroup.procs files; bounded: a few groups for
  // each of the 8 most recent agents). Everything else must be back where it was.
  const size_t pool_after = open_fd_kinds(daemon)["cgroup file"];
  EXPECT_LE(fds_after - pool_after, fds_before - pool_before + 2)
      << "descriptors other than the cgroup pool's: " << fds_before - pool_before << " before, "
      << fds_after - pool_after << " after";
  // The 100 MB request is refused, but what gRPC read of it before the refusal can stay in
  // glibc's free lists until the daemon's memory trimmer runs (every 5 s, once 16 MiB are free).
  // (Under ASan the allocator is ASan's, with its quarantine and no trimming: figures only.)
  uint64_t rss_after = 0;
#if defined(CODEXD_SANITIZE)  // the daemon under test is ASan-built (tests themselves are not instrumented)
  rss_after = resident_bytes(daemon);
#else
  EXPECT_TRUE(eventually([&] { return (rss_after = resident_bytes(daemon)) < rss_before + 32 * kMiB; }))
      << "RSS " << rss_before / kMiB << " MiB before, " << rss_after / kMiB << " MiB 30 s after the battery";
#endif
  std::printf("hostile battery: daemon sockets %zu -> %zu, descriptors %zu -> %zu (cgroup pool %zu -> %zu), "
              "RSS %.1f MiB before, %.1f right after, %.1f once trimmed\n",
              sockets_before, sockets_after, fds_before, fds_after, pool_before, pool_after,
              static_cast<double>(rss_before) / kMiB, static_cast<double>(rss_peak) / kMiB,
              static_cast<double>(rss_after) / kMiB);
}

}  // namespace
}  // namespace codexd::testing
