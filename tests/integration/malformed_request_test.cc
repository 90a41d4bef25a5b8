// Bad requests get the right status code and a message naming the field; hostile clients
// (garbage bytes, connection floods, abrupt disconnects) do not hurt the daemon, which keeps
// serving afterwards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <sstream>

#include <grpcpp/generic/generic_stub.h>

#include <future>

#include "codexd/v1/approvals.grpc.pb.h"
#include "codexd/v1/policy.grpc.pb.h"
#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

using ::testing::HasSubstr;
using Code = grpc::StatusCode;

// What a sandbox_permissions of 7 (no such value) is told, by every RPC that takes one.
constexpr const char* kBadSandboxPermissions =
    "`sandbox_permissions` is 7, not a SandboxPermissions value: use USE_DEFAULT (1; unset means the same) or "
    "REQUIRE_ESCALATED (2)";

class MalformedRequestTest : public ::testing::Test {
 protected:
  static TestDaemonOptions options() {
    auto o = unsandboxed();
    o.extra_config = "[exec]\nallow_login_shell = false\n";
    return o;
  }
  void SetUp() override {
    ASSERT_TRUE(daemon_.started()) << daemon_.daemon_log();
    stub_ = v1::Exec::NewStub(daemon_.channel());
  }
  void TearDown() override {
    // Whatever happened, the daemon still serves and stops cleanly.
    expect_serving();
    stub_.reset();  // an open connection would hold the daemon's shutdown for its 2 s grace
    EXPECT_EQ(daemon_.stop(), 0) << daemon_.daemon_log();
  }
  void expect_serving() {
    auto stub = v1::Exec::NewStub(daemon_.channel());
    auto call = exec_command(*stub, argv_request(daemon_, {"/bin/echo", "still here"}));
    ASSERT_TRUE(call.status.ok()) << describe(call.status);
    EXPECT_EQ(call.result.output(), "still here\n");
    EXPECT_EQ(call.result.exit_code(), 0);
  }
  grpc::Status exec(const v1::ExecCommandRequest& request) { return exec_command(*stub_, request).status; }
  grpc::Status run(const v1::RunCommandRequest& request) {
    grpc::ClientContext context;
    v1::RunCommandResponse response;
    return stub_->RunCommand(&context, request, &response);
  }

  TestDaemon daemon_{options()};
  std::unique_ptr<v1::Exec::Stub> stub_;
};

#define EXPECT_STATUS(call, code, message)                            \
  do {                                                                \
    grpc::Status st_ = (call);                                        \
    EXPECT_EQ(st_.error_code(), code) << describe(st_);               \
    EXPECT_EQ(st_.error_message(), std::string(message));             \
  } while (0)

TEST_F(MalformedRequestTest, ExecCommandFieldsAreValidated) {
  v1::ExecCommandRequest none;
  none.set_workdir(daemon_.workspace());
  EXPECT_STATUS(exec(none), Code::INVALID_ARGUMENT, "missing command: set `cmd` (a shell script) or `argv`");

  auto both = argv_request(daemon_, {"/bin/true"});
  both.set_cmd("true");
  EXPECT_STATUS(exec(both), Code::INVALID_ARGUMENT, "set exactly one of `cmd` and `argv` (both are set)");

  auto relative = argv_request(daemon_, {"/bin/true"});
  relative.set_workdir("ws");
  EXPECT_STATUS(exec(relative), Code::INVALID_ARGUMENT, "`workdir` must be an absolute path (got \"ws\")");
  relative.clear_workdir();
  EXPECT_STATUS(exec(relative), Code::INVALID_ARGUMENT, "`workdir` is required: give the absolute directory to run in");

  auto huge_cmd = shell_request(daemon_, std::string(1024 * 1024 + 1, 'x'));
  EXPECT_STATUS(exec(huge_cmd), Code::INVALID_ARGUMENT, "`cmd` is 1048577 bytes; the limit is 1048576");
  auto huge_argv = argv_request(daemon_, {"/bin/echo", std::string(1024 * 1024, 'x')});
  EXPECT_STATUS(exec(huge_argv), Code::INVALID_ARGUMENT, "`argv` is 1048585 bytes; the limit is 1048576");

  auto nul = argv_request(daemon_, {"/bin/echo", std::string("a\0b", 3)});
  EXPECT_STATUS(exec(nul), Code::INVALID_ARGUMENT, "`argv[1]` contains a NUL byte");
  auto empty_program = argv_request(daemon_, {""});
  EXPECT_STATUS(exec(empty_program), Code::INVALID_ARGUMENT, "`argv[0]` is empty: give the program to run");

  auto rows = argv_request(daemon_, {"/bin/true"});
  rows.set_tty(true);
  rows.set_rows(1001);
  EXPECT_STATUS(exec(rows), Code::INVALID_ARGUMENT, "`rows` and `cols` must be at most 1000");
  auto size_without_tty = argv_request(daemon_, {"/bin/true"});
  size_without_tty.set_cols(100);
  EXPECT_STATUS(exec(size_without_tty), Code::INVALID_ARGUMENT, "`rows`/`cols` apply only with `tty` = true");

  auto env = argv_request(daemon_, {"/bin/true"});
  (*env.mutable_env())["A=B"] = "c";
  EXPECT_STATUS(exec(env), Code::INVALID_ARGUMENT,
                "`env` name \"A=B\" is invalid: names must be non-empty without '=' or NUL");
  auto empty_env = argv_request(daemon_, {"/bin/true"});
  (*empty_env.mutable_env())[""] = "c";
  EXPECT_STATUS(exec(empty_env), Code::INVALID_ARGUMENT,
                "`env` name \"\" is invalid: names must be non-empty without '=' or NUL");

  auto tokens = argv_request(daemon_, {"/bin/true"});
  tokens.set_max_output_tokens(1'000'001);
  EXPECT_STATUS(exec(tokens), Code::INVALID_ARGUMENT, "`max_output_tokens` must be at most 1000000 (got 1000001)");

  auto login = shell_request(daemon_, "true");
  login.set_login(true);
  EXPECT_STATUS(exec(login), Code::INVALID_ARGUMENT, "login shell is disabled by config; omit `login` or set it to false.");
  auto login_argv = argv_request(daemon_, {"/bin/true"});
  login_argv.set_login(false);
  EXPECT_STATUS(exec(login_argv), Code::INVALID_ARGUMENT, "`login` applies only to `cmd`; remove it or use `cmd`");
  auto shell = shell_request(daemon_, "true");
  shell.set_shell("bash");
  EXPECT_STATUS(exec(shell), Code::INVALID_ARGUMENT, "`shell` must be an absolute path (got \"bash\")");

  auto permissions = argv_request(daemon_, {"/bin/true"});
  permissions.set_sandbox_permissions(static_cast<v1::SandboxPermissions>(7));
  EXPECT_STATUS(exec(permissions), Code::INVALID_ARGUMENT, kBadSandboxPermissions);
  auto label = argv_request(daemon_, {"/bin/true"});
  label.set_call_id(std::string(257, 'c'));
  EXPECT_STATUS(exec(label), Code::INVALID_ARGUMENT, "`call_id` is 257 bytes; the limit is 256");
}

// Every enum's 0 value is <ENUM>_UNSPECIFIED, what a client that leaves the field unset sends:
// for sandbox_permissions it means USE_DEFAULT, for Cancel's mode TERMINATE. A number outside
// the enum is INVALID_ARGUMENT from every RPC that takes it.
TEST_F(MalformedRequestTest, UnsetEnumsMeanTheirDefaultsAndUnknownNumbersAreRejected) {
  auto unset = argv_request(daemon_, {"/bin/echo", "unset"});
  unset.set_sandbox_permissions(v1::SANDBOX_PERMISSIONS_UNSPECIFIED);
  auto ran = exec_command(*stub_, unset);
  ASSERT_TRUE(ran.status.ok()) << describe(ran.status);
  EXPECT_EQ(ran.result.output(), "unset\n");
  EXPECT_EQ(ran.result.sandbox(), v1::SANDBOX_NONE) << "an unsandboxed daemon says so explicitly";

  v1::RunCommandRequest run_request;
  run_request.add_argv("/bin/true");
  run_request.set_workdir(daemon_.workspace());
  run_request.set_sandbox_permissions(static_cast<v1::SandboxPermissions>(7));
  EXPECT_STATUS(run(run_request), Code::INVALID_ARGUMENT, kBadSandboxPermissions);

  auto policy = v1::Policy::NewStub(daemon_.channel());
  v1::CheckPolicyRequest check;
  check.add_argv("ls");
  check.set_sandbox_permissions(static_cast<v1::SandboxPermissions>(7));
  {
    grpc::ClientContext context;
    v1::CheckPolicyResponse response;
    EXPECT_STATUS(policy->CheckPolicy(&context, check, &response), Code::INVALID_ARGUMENT, kBadSandboxPermissions);
  }

  // Cancel with the mode unset: SIGTERM, as TERMINATE.
  auto started = exec_command(*stub_, argv_request(daemon_, {"/bin/sleep", "30"}, 250));
  ASSERT_TRUE(started.status.ok() && started.result.has_session_id()) << describe(started.status);
  {
    grpc::ClientContext context;
    v1::CancelRequest request;
    request.set_session_id(started.result.session_id());
    v1::CancelResponse response;
    ASSERT_TRUE(stub_->Cancel(&context, request, &response).ok());
    EXPECT_TRUE(response.was_running());
  }
  auto ended = follow_until_exit(*stub_, started.result);
  ASSERT_TRUE(ended.exited) << describe(ended.status);
  EXPECT_EQ(ended.last.signal(), SIGTERM);
  EXPECT_EQ(ended.last.termination(), v1::CANCELLED);
}

TEST_F(MalformedRequestTest, WithLoginShellsDisabledCmdRunsWithDashC) {
  auto call = exec_command(*stub_, shell_request(daemon_, "shopt -q login_shell && echo login || echo plain"));
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  EXPECT_EQ(call.result.output(), "plain\n");
}

TEST_F(MalformedRequestTest, AMissingWorkdirOrProgramIsReported) {
  auto missing = argv_request(daemon_, {"/bin/true"});
  missing.set_workdir(daemon_.workspace() + "/does-not-exist");
  auto st = exec(missing);
  EXPECT_EQ(st.error_code(), Code::INVALID_ARGUMENT) << describe(st);
  EXPECT_THAT(st.error_message(), HasSubstr("does-not-exist"));

  // Nothing ran: a result with a SPAWN_FAILED rejection, not an RPC error.
  auto call = exec_command(*stub_, argv_request(daemon_, {"/nonexistent/program"}));
  ASSERT_TRUE(call.status.ok()) << describe(call.status);
  EXPECT_EQ(call.result.rejection().reason(), v1::Rejection::SPAWN_FAILED) << call.result.DebugString();
  EXPECT_THAT(call.result.rejection().message(), HasSubstr("/nonexistent/program"));
  EXPECT_FALSE(call.result.has_exit_code());
  EXPECT_FALSE(call.result.has_session_id());
}

TEST_F(MalformedRequestTest, SessionCallsValidateIdsAndSizes) {
  for (int bad : {0, -5}) {
    const std::string message = "`session_id` is required (a positive id returned by ExecCommand)";
    EXPECT_STATUS(poll(*stub_, bad, 0).status, Code::INVALID_ARGUMENT, message);
    EXPECT_STATUS(write_stdin(*stub_, bad, "").status, Code::INVALID_ARGUMENT, message);
    EXPECT_STATUS(cancel(*stub_, bad, v1::CancelRequest::KILL), Code::INVALID_ARGUMENT, message);
  }
  // Ids are in [1000, 100000): these are unknown.
  for (int unknown : {999, 100'000}) {
    const std::string message = "Unknown process id " + std::to_string(unknown);
    EXPECT_STATUS(poll(*stub_, unknown, 0).status, Code::NOT_FOUND, message);
    EXPECT_STATUS(write_stdin(*stub_, unknown, "x").status, Code::NOT_FOUND, message);
    EXPECT_STATUS(cancel(*stub_, unknown, v1::CancelRequest::TERMINATE), Code::NOT_FOUND, message);
    grpc::ClientContext context;
    v1::AttachRequest attach;
    attach.set_session_id(unknown);
    auto reader = stub_->Attach(&context, attach);
    v1::OutputEvent event;
    EXPECT_FALSE(reader->Read(&event));
    EXPECT_STATUS(reader->Finish(), Code::NOT_FOUND, message);
  }
  {
    grpc::ClientContext context;
    v1::AttachRequest attach;
    auto reader = stub_->Attach(&context, attach);
    v1::OutputEvent event;
    EXPECT_FALSE(reader->Read(&event));
    EXPECT_EQ(reader->Finish().error_code(), Code::INVALID_ARGUMENT);
  }

  auto req = argv_request(daemon_, {"cat"}, 250);
  req.set_tty(true);
  auto call = exec_command(*stub_, req);
  ASSERT_TRUE(call.status.ok() && call.result.has_session_id()) << describe(call.status);
  const int id = call.result.session_id();
  EXPECT_STATUS(write_stdin(*stub_, id, std::string(1024 * 1024 + 1, 'x')).status, Code::INVALID_ARGUMENT,
                "`chars` is 1048577 bytes; the limit is 1048576");
  {
    grpc::ClientContext context;
    v1::SendInputRequest input;
    input.set_session_id(id);
    input.set_data(std::string(1024 * 1024 + 1, 'x'));
    v1::SendInputResponse response;
    EXPECT_STATUS(stub_->SendInput(&context, input, &response), Code::INVALID_ARGUMENT,
                  "`data` is 1048577 bytes; the limit is 1048576");
  }
  {
    grpc::ClientContext context;
    v1::PollRequest p;
    p.set_session_id(id);
    p.set_max_output_tokens(2'000'000);
    v1::ExecResult result;
    EXPECT_STATUS(stub_->Poll(&context, p, &result), Code::INVALID_ARGUMENT,
                  "`max_output_tokens` must be at most 1000000 (got 2000000)");
  }
  {
    grpc::ClientContext context;
    v1::CancelRequest c;
    c.set_session_id(id);
    c.set_mode(static_cast<v1::CancelRequest::Mode>(9));
    v1::CancelResponse response;
    EXPECT_STATUS(stub_->Cancel(&context, c, &response), Code::INVALID_ARGUMENT,
                  "`mode` is 9, not a CancelRequest.Mode value: use TERMINATE (1; unset means the same), INTERRUPT (2) "
                  "or KILL (3)");
  }
  EXPECT_STATUS(cancel(*stub_, id, v1::CancelRequest::TERMINATE, 60'001), Code::INVALID_ARGUMENT,
                "`grace_ms` must be at most 60000");
  {
    grpc::ClientContext context;
    v1::ResizeTerminalRequest resize;
    resize.set_session_id(id);
    resize.set_rows(0);
    resize.set_cols(80);
    v1::ResizeTerminalResponse response;
    EXPECT_STATUS(stub_->ResizeTerminal(&context, resize, &response), Code::INVALID_ARGUMENT,
                  "`rows` and `cols` must be between 1 and 1000");
  }
  {
    grpc::ClientContext context;
    v1::AttachRequest attach;
    attach.set_session_id(id);
    attach.set_from_offset(1'000'000);
    auto reader = stub_->Attach(&context, attach);
    v1::OutputEvent event;
    EXPECT_FALSE(reader->Read(&event));
    EXPECT_EQ(reader->Finish().error_code(), Code::OUT_OF_RANGE);
  }
  // A request larger than the daemon accepts at all (8 MiB) is refused by gRPC itself.
  {
    grpc::ClientContext context;
    v1::SendInputRequest input;
    input.set_session_id(id);
    input.set_data(std::string(9 * 1024 * 1024, 'x'));
    v1::SendInputResponse response;
    EXPECT_EQ(stub_->SendInput(&context, input, &response).error_code(), Code::RESOURCE_EXHAUSTED);
  }
  // The session is untouched by all of that.
  auto written = write_stdin(*stub_, id, "ok\n");
  ASSERT_TRUE(written.status.ok()) << describe(written.status);
  auto echoed = follow(*stub_, written.result, [](const std::string& out) { return out.size() >= 8; });
  EXPECT_EQ(echoed.output, "ok\r\nok\r\n");
}

// An approval id too long to be one is told apart from a missing one.
TEST_F(MalformedRequestTest, ResolveApprovalSaysWhatIsWrongWithTheId) {
  auto approvals = v1::Approvals::NewStub(daemon_.channel());
  auto resolve = [&](const std::string& id) {
    grpc::ClientContext context;
    v1::ResolveApprovalRequest request;
    request.set_approval_id(id);
    request.set_decision(v1::DENIED);
    v1::ResolveApprovalResponse response;
    return approvals->ResolveApproval(&context, request, &response);
  };
  EXPECT_STATUS(resolve(""), Code::INVALID_ARGUMENT, "`approval_id` is required (from WatchApprovals or ListApprovals)");
  EXPECT_STATUS(resolve(std::string(1 << 20, 'x')), Code::INVALID_ARGUMENT,
                "`approval_id` is 1048576 bytes; an approval id is at most 64 (from WatchApprovals or ListApprovals)");
}

TEST_F(MalformedRequestTest, RunCommandFieldsAreValidated) {
  v1::RunCommandRequest none;
  none.set_workdir(daemon_.workspace());
  EXPECT_STATUS(run(none), Code::INVALID_ARGUMENT, "missing command: set `cmd` (a shell script) or `argv`");
  v1::RunCommandRequest relative;
  relative.add_argv("/bin/true");
  relative.set_workdir("relative/dir");
  EXPECT_STATUS(run(relative), Code::INVALID_ARGUMENT, "`workdir` must be an absolute path (got \"relative/dir\")");
  v1::RunCommandRequest zero;
  zero.add_argv("/bin/true");
  zero.set_workdir(daemon_.workspace());
  zero.set_timeout_ms(0);
  EXPECT_STATUS(run(zero), Code::INVALID_ARGUMENT, "`timeout_ms` must be between 1 and 86400000 (got 0)");
  v1::RunCommandRequest login;
  login.set_cmd("true");
  login.set_login(true);
  login.set_workdir(daemon_.workspace());
  EXPECT_STATUS(run(login), Code::INVALID_ARGUMENT, "login shell is disabled by config; omit `login` or set it to false.");
}

// The daemon log's lines that contain `needle`.
std::vector<std::string> log_lines_with(const std::string& log, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) out.push_back(line);
  }
  return out;
}

// Sends `bytes` as the request of `method` (e.g. "/codexd.v1.Exec/Poll"), unparsed.
grpc::Status raw_unary(const TestDaemon& daemon, const std::string& method, const std::string& bytes) {
  grpc::GenericStub stub(daemon.channel());
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(std::move(status)); });
  return done.get_future().get();
}

// Issue 19 item 8: bytes that are not a message of the method's request type are
// INVALID_ARGUMENT naming the type (gRPC 1.51 alone answers UNIMPLEMENTED with no message).
TEST_F(MalformedRequestTest, AnUnparseableRequestIsInvalidArgumentNamingItsType) {
  const std::string truncated("\x0a\x10/only-a-few", 13);  // field 1 says 16 bytes follow; 11 do
  EXPECT_STATUS(raw_unary(daemon_, "/codexd.v1.Exec/ExecCommand", truncated), Code::INVALID_ARGUMENT,
                "request could not be parsed as codexd.v1.ExecCommandRequest");
  EXPECT_STATUS(raw_unary(daemon_, "/codexd.v1.Exec/Poll", std::string("\xff\xff\xff\xff", 4)), Code::INVALID_ARGUMENT,
                "request could not be parsed as codexd.v1.PollRequest");
  EXPECT_STATUS(raw_unary(daemon_, "/codexd.v1.Approvals/ListApprovals", truncated), Code::INVALID_ARGUMENT,
                "request could not be parsed as codexd.v1.ListApprovalsRequest");
  EXPECT_STATUS(raw_unary(daemon_, "/codexd.v1.Admin/GetStatus", truncated), Code::INVALID_ARGUMENT,
                "request could not be parsed as codexd.v1.GetStatusRequest");
  // A valid message sent the same way is served: the daemon's own parse is the normal path.
  v1::ListSessionsRequest list;
  EXPECT_TRUE(raw_unary(daemon_, "/codexd.v1.Exec/ListSessions", list.SerializeAsString()).ok());
}

// Issue 19 item 11: a request whose string field is not UTF-8 cannot be parsed; libprotobuf
// used to write an ERROR line of its own to the daemon's stderr for each one, so any client
// could fill the log. Now its lines are spdlog debug lines (at most one a second).
TEST_F(MalformedRequestTest, InvalidUtf8InAStringFieldWritesNoErrorLine) {
  for (int i = 0; i < 20; ++i) {
    auto bad = argv_request(daemon_, {"/bin/true"});
    bad.set_workdir(daemon_.workspace() + "/\xff\xfe");
    EXPECT_STATUS(exec(bad), Code::INVALID_ARGUMENT, "request could not be parsed as codexd.v1.ExecCommandRequest");
  }
  expect_serving();
  const std::string log = daemon_.daemon_log();
  EXPECT_EQ(log.find("[libprotobuf"), std::string::npos) << log;
  for (const auto& line : log_lines_with(log, "invalid UTF-8")) {
    EXPECT_NE(line.find(" debug codexd["), std::string::npos) << line;
  }
}

// Issue 19 item 11: a client that connects and exits before the daemon accepts (an ordinary
// short-lived client) used to cost a warning each ("cannot read /proc/N/ns/user"). The daemon
// is stopped while 20 such clients come and go, so all of them are gone when it accepts.
TEST_F(MalformedRequestTest, ClientsThatExitBeforeAcceptAreNotWarnedAbout) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", daemon_.socket_path().c_str());
  ASSERT_EQ(::kill(daemon_.pid(), SIGSTOP), 0);
  for (int i = 0; i < 20; ++i) {
    pid_t child = ::fork();
    if (child == 0) {
      int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
      _exit(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 ? 0 : 1);
    }
    ASSERT_GT(child, 0);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "client " << i << " could not connect";
  }
  ASSERT_EQ(::kill(daemon_.pid(), SIGCONT), 0);
  // Accepted in order: once a new client is served, the 20 were handled.
  expect_serving();
  const std::string log = daemon_.daemon_log();
  for (const auto& line : log_lines_with(log, "/ns/")) {
    EXPECT_EQ(line.find(" warning codexd["), std::string::npos) << line;
  }
}

TEST_F(MalformedRequestTest, GarbageBytesOnTheSocketAreDropped) {
  std::mt19937 rng(42);
  for (int round = 0; round < 20; ++round) {
    int fd = connect_unix(daemon_.socket_path());
    ASSERT_GE(fd, 0);
    std::string junk(4096, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    if (round % 2) junk = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + junk;  // a valid preface, then nonsense frames
    (void)!::write(fd, junk.data(), junk.size());
    ::shutdown(fd, SHUT_WR);
    // The daemon closes the connection (EOF or reset); it must not hang on to it.
    char buf[4096];
    while (::read(fd, buf, sizeof buf) > 0) {
    }
    ::close(fd);
  }
  expect_serving();
}

TEST_F(MalformedRequestTest, AFloodOfConnectionsThatVanishAbruptlyLeavesNothingBehind) {
  {
    SCOPED_TRACE("before the flood");
    expect_serving();
  }
  // Sockets are what a dropped connection would leave behind; gRPC may open other
  // descriptors of its own under load (a poller thread's eventfd), which are not the point.
  const size_t baseline = open_fd_kinds(daemon_.pid())["socket"];
  for (int round = 0; round < 200; ++round) {
    int fd = connect_unix(daemon_.socket_path());
    ASSERT_GE(fd, 0) << "round " << round;
    if (round % 3 == 0) (void)!::write(fd, "PRI * HTTP/2.0\r\n", 16);  // half a preface
    linger reset{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);  // close with RST
    ::close(fd);
  }
  {
    SCOPED_TRACE("after the flood");
    expect_serving();
  }
  // Every dropped connection's descriptor is closed again (a hang guard, not a timing check).
  size_t now = 0;
  for (int i = 0; i < 500 && (now = open_fd_kinds(daemon_.pid())["socket"]) > baseline + 2; ++i) ::usleep(20'000);
  std::string kinds;
  for (const auto& [kind, count] : open_fd_kinds(daemon_.pid())) kinds += " " + kind + "=" + std::to_string(count);
  EXPECT_LE(now, baseline + 2) << "daemon sockets: " << baseline << " before, " << now << " after; now:" << kinds;
  // gRPC clients that die with calls in flight.
  for (int i = 0; i < 5; ++i) {
    BackgroundProcess client({TestDaemon::codexctl_binary(), "--socket", daemon_.socket_path(), "exec", "-C",
                              daemon_.workspace(), "--", "sleep", "1000"});
    client.kill_and_reap();
  }
}

}  // namespace
}  // namespace codexd::testing
