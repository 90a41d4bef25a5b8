// Another uid on a widened socket: it may connect, but a user-mode daemon runs commands only
// for its own uid, and nobody may see or touch another uid's sessions. Checked over gRPC (exact
// status codes, the connection made as uid 65534) and through codexctl run as that uid.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

constexpr uid_t kNobody = 65534;

TestDaemonOptions shared_socket() {
  auto options = unsandboxed();
  options.socket_mode = "0666";
  options.socket_dir_mode = "0755";
  return options;
}

class OtherUidTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.started()) << daemon_.daemon_log();
    root_ = v1::Exec::NewStub(daemon_.channel());
    auto call = exec_command(*root_, argv_request(daemon_, {"sleep", "1000"}, 250));
    ASSERT_TRUE(call.status.ok() && call.result.has_session_id()) << describe(call.status);
    root_session_ = call.result.session_id();
    // Exactly what a session id that does not exist gets: another uid learns nothing.
    denied_ = "Unknown process id " + std::to_string(root_session_);
  }
  void TearDown() override {
    root_.reset();  // an open connection would hold the daemon's shutdown for its 2 s grace
    EXPECT_EQ(daemon_.stop(), 0);
  }

  TestDaemon daemon_{shared_socket()};
  std::unique_ptr<v1::Exec::Stub> root_;
  int root_session_ = 0;
  std::string denied_;
};

TEST_F(OtherUidTest, AnotherUidIsRefusedAndCannotTellWhichSessionIdsExist) {
  ChannelAsUid nobody(daemon_.socket_path(), kNobody);
  ASSERT_TRUE(nobody.ok());
  auto stub = v1::Exec::NewStub(nobody.channel());
  // It is served (an empty list of its own sessions)...
  EXPECT_TRUE(list_sessions(*stub).empty());

  // ...but runs nothing.
  const std::string not_for_you = "this codexd runs commands as uid 0 (user mode); uid 65534 may not use it";
  auto exec = exec_command(*stub, argv_request(daemon_, {"/bin/true"}));
  EXPECT_EQ(exec.status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << describe(exec.status);
  EXPECT_EQ(exec.status.error_message(), not_for_you);
  {
    grpc::ClientContext context;
    v1::RunCommandRequest run;
    run.add_argv("/bin/true");
    run.set_workdir(daemon_.workspace());
    v1::RunCommandResponse response;
    auto st = stub->RunCommand(&context, run, &response);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED) << describe(st);
    EXPECT_EQ(st.error_message(), not_for_you);
  }

  // Root's session: every way in is refused as if it did not exist, and it keeps running.
  auto polled = poll(*stub, root_session_, 0);
  EXPECT_EQ(polled.status.error_code(), grpc::StatusCode::NOT_FOUND) << describe(polled.status);
  EXPECT_EQ(polled.status.error_message(), denied_);
  auto written = write_stdin(*stub, root_session_, "x");
  EXPECT_EQ(written.status.error_code(), grpc::StatusCode::NOT_FOUND) << describe(written.status);
  EXPECT_EQ(written.status.error_message(), denied_);
  auto empty_write = write_stdin(*stub, root_session_, "");
  EXPECT_EQ(empty_write.status.error_code(), grpc::StatusCode::NOT_FOUND);
  for (auto mode : {v1::CancelRequest::INTERRUPT, v1::CancelRequest::TERMINATE, v1::CancelRequest::KILL}) {
    auto st = cancel(*stub, root_session_, mode);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND) << describe(st);
    EXPECT_EQ(st.error_message(), denied_);
  }
  {
    grpc::ClientContext context;
    v1::AttachRequest attach;
    attach.set_session_id(root_session_);
    auto reader = stub->Attach(&context, attach);
    v1::OutputEvent event;
    EXPECT_FALSE(reader->Read(&event));
    auto st = reader->Finish();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND) << describe(st);
    EXPECT_EQ(st.error_message(), denied_);
  }
  {
    grpc::ClientContext context;
    v1::SendInputRequest input;
    input.set_session_id(root_session_);
    input.set_data("x");
    v1::SendInputResponse response;
    EXPECT_EQ(stub->SendInput(&context, input, &response).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  {
    grpc::ClientContext context;
    v1::ResizeTerminalRequest resize;
    resize.set_session_id(root_session_);
    resize.set_rows(10);
    resize.set_cols(10);
    v1::ResizeTerminalResponse response;
    EXPECT_EQ(stub->ResizeTerminal(&context, resize, &response).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  {
    grpc::ClientContext context;
    v1::ListSessionsRequest all;
    all.set_all_users(true);
    v1::ListSessionsResponse response;
    EXPECT_EQ(stub->ListSessions(&context, all, &response).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  }
  // An unknown id is still NOT_FOUND for anyone.
  EXPECT_EQ(poll(*stub, 99'999 == root_session_ ? 99'998 : 99'999, 0).status.error_code(), grpc::StatusCode::NOT_FOUND);

  auto still = poll(*root_, root_session_, 0);
  ASSERT_TRUE(still.status.ok()) << describe(still.status);
  EXPECT_EQ(still.result.session_id(), root_session_);
}

TEST_F(OtherUidTest, CodexctlRunAsAnotherUidPrintsTheDaemonsRefusalAndFails) {
  auto exec = daemon_.codexctl({"exec", "-C", daemon_.workspace(), "--", "/bin/true"}, "", kNobody);
  EXPECT_EQ(exec.exit_code, 1);
  EXPECT_EQ(exec.err, "codexctl: this codexd runs commands as uid 0 (user mode); uid 65534 may not use it\n");
  EXPECT_EQ(exec.out, "");
  const std::string id = std::to_string(root_session_);
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"poll", id}, {"attach", id}, {"kill", id}, {"kill", id, "--signal", "kill"}, {"write", id, "x"}}) {
    auto r = daemon_.codexctl(args, "", kNobody);
    EXPECT_EQ(r.exit_code, 1) << args[0];
    EXPECT_EQ(r.err, "codexctl: " + denied_ + "\n") << args[0];
  }
  auto sessions = daemon_.codexctl({"sessions", "--json"}, "", kNobody);
  EXPECT_EQ(sessions.exit_code, 0) << sessions.err;
  EXPECT_EQ(sessions.out, "{\"sessions\":[]}\n");
  // Root's session survived all of it.
  auto still = poll(*root_, root_session_, 0);
  ASSERT_TRUE(still.status.ok()) << describe(still.status);
  EXPECT_TRUE(still.result.has_session_id());
}

}  // namespace
}  // namespace codexd::testing
