// The smallest end-to-end check: a real daemon answers status and runs a command.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "codexd/v1/exec.grpc.pb.h"
#include "tests/support/test_daemon.h"

namespace codexd::testing {
namespace {

TEST(Smoke, DaemonRunsACommandOverGrpcAndCodexctl) {
  TestDaemon daemon;
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto stub = v1::Exec::NewStub(daemon.channel());
  grpc::ClientContext ctx;
  v1::ExecCommandRequest req;
  req.add_argv("/bin/echo");
  req.add_argv("hi");
  req.set_workdir(daemon.workspace());
  v1::ExecResult res;
  ASSERT_TRUE(stub->ExecCommand(&ctx, req, &res).ok());
  EXPECT_EQ(res.exit_code(), 0);
  EXPECT_EQ(res.output(), "hi\n");
  auto r = daemon.codexctl({"exec", "-C", daemon.workspace(), "--", "sh", "-c", "echo out; exit 4"});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(daemon.stop(), 0);
  EXPECT_FALSE(std::filesystem::exists(daemon.socket_path()));
}

}  // namespace
}  // namespace codexd::testing
