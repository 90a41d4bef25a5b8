// The fixture the exec-core integration tests share: one unsandboxed daemon and an Exec stub.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "codexd/v1/exec.grpc.pb.h"
#include "tests/integration/daemon_options.h"

namespace codexd::testing {

class UnsandboxedDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.started()) << daemon_.daemon_log();
    stub_ = v1::Exec::NewStub(daemon_.channel());
  }
  void TearDown() override {
    stub_.reset();  // an open connection would hold the daemon's shutdown for its 2 s grace
    EXPECT_EQ(daemon_.stop(), 0) << daemon_.daemon_log();
  }

  TestDaemon daemon_{unsandboxed()};
  std::unique_ptr<v1::Exec::Stub> stub_;
};

}  // namespace codexd::testing
