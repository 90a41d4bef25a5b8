// The daemon's debug log of RPCs (daemon/server/rpc_log.h): one line per call with its
// method, caller, ids and outcome, for unary and streaming methods alike, and never the
// command text. Test daemons log at debug.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "codexd/v1/admin.grpc.pb.h"
#include "codexd/v1/approvals.grpc.pb.h"
#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"

namespace codexd::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(RpcLog, EveryCallIsLoggedWithItsCallerIdsAndOutcomeButNotItsCommand) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto exec = v1::Exec::NewStub(daemon.channel());

  grpc::ClientContext context;
  TestDaemon::label(context, "rpc-log-agent");
  v1::ExecResult started;
  auto request = argv_request(daemon, {"/bin/sh", "-c", "read line; echo codexd-marker-$line"}, 50);
  request.set_tty(true);  // stdin is written to (a pipe session takes only Ctrl-C)
  ASSERT_TRUE(exec->ExecCommand(&context, request, &started).ok());
  ASSERT_TRUE(started.has_session_id()) << started.text();
  const std::string id = std::to_string(started.session_id());
  ASSERT_TRUE(poll(*exec, started.session_id(), 0).status.ok());
  ExecCall written = write_stdin(*exec, started.session_id(), "x\n");
  ASSERT_TRUE(written.status.ok()) << describe(written.status);
  Followed followed = follow_until_exit(*exec, written.result);
  ASSERT_TRUE(followed.exited) << describe(followed.status);
  EXPECT_THAT(started.output() + followed.output, HasSubstr("codexd-marker-x"));

  EXPECT_EQ(poll(*exec, 99999, 0).status.error_code(), grpc::StatusCode::NOT_FOUND);
  {
    grpc::ClientContext attach_context;
    v1::AttachRequest request;
    request.set_session_id(99998);
    auto stream = exec->Attach(&attach_context, request);
    v1::OutputEvent event;
    while (stream->Read(&event)) {
    }
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
  }
  {
    auto approvals = v1::Approvals::NewStub(daemon.channel());
    grpc::ClientContext resolve_context;
    v1::ResolveApprovalRequest request;
    request.set_approval_id("apr_0000000000000000");
    request.set_decision(v1::APPROVED);
    v1::ResolveApprovalResponse response;
    EXPECT_FALSE(approvals->ResolveApproval(&resolve_context, request, &response).ok());
  }
  // An info line flushes the debug lines before it (the log flushes on info); this one is
  // itself checked: a reload by RPC is logged as a SIGHUP one is.
  exec.reset();
  auto admin = v1::Admin::NewStub(daemon.channel());
  grpc::ClientContext reload_context;
  v1::ReloadPolicyResponse reloaded;
  ASSERT_TRUE(admin->ReloadPolicy(&reload_context, v1::ReloadPolicyRequest(), &reloaded).ok());

  admin.reset();  // no connection left to hold the daemon's shutdown
  const std::string log = daemon.daemon_log();
  const std::string caller = "uid=" + std::to_string(::getuid()) + " pid=" + std::to_string(::getpid());
  EXPECT_THAT(log, HasSubstr("rpc /codexd.v1.Exec/ExecCommand " + caller + " agent=\"rpc-log-agent\" session=" + id +
                             " -> OK in "));
  EXPECT_THAT(log, HasSubstr("rpc /codexd.v1.Exec/WriteStdin " + caller + " session=" + id + " -> OK in "));
  EXPECT_THAT(log, HasSubstr("rpc /codexd.v1.Exec/Poll " + caller + " session=" + id + " -> OK in "));
  EXPECT_THAT(log, HasSubstr("rpc /codexd.v1.Exec/Poll " + caller + " session=99999 -> NOT_FOUND \"Unknown process id 99999\""));
  EXPECT_THAT(log, HasSubstr("rpc /codexd.v1.Exec/Attach " + caller + " session=99998 -> NOT_FOUND"));
  EXPECT_THAT(log, HasSubstr("rpc /codexd.v1.Approvals/ResolveApproval " + caller + " approval=apr_0000000000000000 -> "));
  EXPECT_THAT(log, HasSubstr("policy reloaded (Admin.ReloadPolicy by uid " + std::to_string(::getuid()) + "): "));
  EXPECT_THAT(log, Not(HasSubstr("codexd-marker"))) << "the command text (or its output) reached the log";
  EXPECT_EQ(daemon.stop(), 0) << daemon.daemon_log();
}

}  // namespace
}  // namespace codexd::testing
