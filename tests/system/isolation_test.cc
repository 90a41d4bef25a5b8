// Two real users on one system-mode daemon: a session and an approval belong to the uid that
// made them. User a cannot list, poll, write to, attach to, resize, signal or cancel b's
// session, nor see or resolve b's approvals unless configured as a reviewer (reviewer_uids or
// reviewer_group); each refusal has its exact status code, and b's session is untouched after.
#include <gmock/gmock.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "codexd/v1/admin.pb.h"
#include "codexd/v1/approvals.grpc.pb.h"
#include "codexd/v1/exec.pb.h"
#include "tests/system/system_env.h"

namespace codexd::testing {
namespace {

using ::testing::HasSubstr;

constexpr int kOk = 0;
constexpr int kNotFound = 5;
constexpr int kPermissionDenied = 7;

class Isolation : public ::testing::Test {
 protected:
  void start(const std::string& tail = "", const std::string& rules = "") {
    dir_ = make_daemon_dir();
    if (!rules.empty()) std::ofstream(dir_ + "/rules/test.rules") << rules;
    daemon_ = std::make_unique<SystemDaemon>(dir_, launch_config(system_mode_config(dir_, "", tail)));
    ASSERT_TRUE(daemon_->wait_ready()) << daemon_->log();
  }
  std::string socket() const { return socket_of(dir_); }
  std::string dir_;
  std::unique_ptr<SystemDaemon> daemon_;
};

// Issue 19: with one global limit, a's 70 sessions SIGKILLed b's running session. The
// limit is per uid now: a prunes only its own.
TEST_F(Isolation, OneUidFillingItsSessionsNeverEvictsAnothers) {
  REQUIRE_SYSTEM_ENV();
  start("[exec]\nmax_sessions = 9\n");
  v1::ExecCommandRequest sleeper;
  sleeper.add_argv("/bin/sleep");
  sleeper.add_argv("600");
  sleeper.set_yield_time_ms(250);
  sleeper.set_workdir(env.b_ws);
  auto b_started = call_as(&env.b, socket(), "ExecCommand", sleeper);
  ASSERT_TRUE(b_started.ok()) << b_started.raw;
  const int b_session = b_started.response<v1::ExecResult>().session_id();
  ASSERT_GT(b_session, 0) << b_started.raw;

  sleeper.set_workdir(env.a_ws);
  for (int i = 0; i < 15; ++i) {
    auto a_started = call_as(&env.a, socket(), "ExecCommand", sleeper);
    ASSERT_TRUE(a_started.ok()) << "session " << i << ": " << a_started.raw;
  }
  auto a_listed = call_as(&env.a, socket(), "ListSessions", v1::ListSessionsRequest());
  ASSERT_TRUE(a_listed.ok()) << a_listed.raw;
  EXPECT_EQ(a_listed.response<v1::ListSessionsResponse>().sessions_size(), 9) << "a keeps its own limit";

  v1::PollRequest poll;
  poll.set_session_id(b_session);
  auto polled = call_as(&env.b, socket(), "Poll", poll);
  EXPECT_TRUE(polled.ok()) << "a's sessions evicted b's: " << polled.raw;
  EXPECT_EQ(polled.response<v1::ExecResult>().session_id(), b_session) << polled.raw;

  // GetStatus shows a user who is not an admin their own counts only; root sees everyone's.
  auto counts = [&](const TestUser* user) {
    auto status = call_as(user, socket(), "GetStatus", v1::GetStatusRequest());
    EXPECT_TRUE(status.ok()) << status.raw;
    const auto r = status.response<v1::GetStatusResponse>();
    return std::pair<uint32_t, uint32_t>{r.sessions_live(), r.sessions_total()};
  };
  EXPECT_EQ(counts(&env.b), (std::pair<uint32_t, uint32_t>{1, 1}));
  EXPECT_EQ(counts(&env.a), (std::pair<uint32_t, uint32_t>{9, 15}));
  EXPECT_EQ(counts(nullptr), (std::pair<uint32_t, uint32_t>{10, 16}));
}

TEST_F(Isolation, SessionsBelongToTheirUid) {
  REQUIRE_SYSTEM_ENV();
  start();
  // b starts a TTY session that echoes its input.
  v1::ExecCommandRequest exec;
  exec.add_argv("/bin/sh");
  exec.add_argv("-c");
  exec.add_argv("stty -echo; echo ready; exec cat");
  exec.set_workdir(env.b_ws);
  exec.set_tty(true);
  exec.set_yield_time_ms(2000);
  auto started = call_as(&env.b, socket(), "ExecCommand", exec);
  ASSERT_TRUE(started.ok()) << started.raw;
  auto first = started.response<v1::ExecResult>();
  ASSERT_TRUE(first.has_session_id()) << started.raw;
  const int id = first.session_id();
  EXPECT_THAT(first.output(), HasSubstr("ready"));

  // a sees none of it.
  auto listed = call_as(&env.a, socket(), "ListSessions", v1::ListSessionsRequest());
  ASSERT_TRUE(listed.ok()) << listed.raw;
  EXPECT_EQ(listed.response<v1::ListSessionsResponse>().sessions_size(), 0) << listed.raw;
  v1::ListSessionsRequest all;
  all.set_all_users(true);
  EXPECT_EQ(call_as(&env.a, socket(), "ListSessions", all).code, kPermissionDenied);

  v1::PollRequest poll;
  poll.set_session_id(id);
  auto polled = call_as(&env.a, socket(), "Poll", poll);
  EXPECT_EQ(polled.code, kNotFound) << polled.raw;
  // Exactly what a missing id gets: a cannot tell that b's session exists.
  EXPECT_EQ(polled.message, "Unknown process id " + std::to_string(id));

  v1::WriteStdinRequest write;
  write.set_session_id(id);
  write.set_chars("echo from-a\n");
  EXPECT_EQ(call_as(&env.a, socket(), "WriteStdin", write).code, kNotFound);
  v1::WriteStdinRequest empty_write;  // a poll through WriteStdin
  empty_write.set_session_id(id);
  EXPECT_EQ(call_as(&env.a, socket(), "WriteStdin", empty_write).code, kNotFound);

  v1::SendInputRequest send;
  send.set_session_id(id);
  send.set_data("from-a\n");
  EXPECT_EQ(call_as(&env.a, socket(), "SendInput", send).code, kNotFound);

  v1::ResizeTerminalRequest resize;
  resize.set_session_id(id);
  resize.set_rows(10);
  resize.set_cols(10);
  EXPECT_EQ(call_as(&env.a, socket(), "ResizeTerminal", resize).code, kNotFound);

  v1::AttachRequest attach;
  attach.set_session_id(id);
  auto attached = call_as(&env.a, socket(), "Attach", attach);
  EXPECT_EQ(attached.code, kNotFound) << attached.raw;
  EXPECT_TRUE(attached.json.empty()) << "a received output of b's session: " << attached.raw;

  for (auto mode : {v1::CancelRequest::TERMINATE, v1::CancelRequest::INTERRUPT, v1::CancelRequest::KILL}) {
    v1::CancelRequest cancel;
    cancel.set_session_id(id);
    cancel.set_mode(mode);
    EXPECT_EQ(call_as(&env.a, socket(), "Cancel", cancel).code, kNotFound) << "mode " << mode;
  }

  // An id nobody has is NOT_FOUND (the two cases are told apart).
  v1::PollRequest unknown;
  unknown.set_session_id(id + 1000);
  EXPECT_EQ(call_as(&env.a, socket(), "Poll", unknown).code, kNotFound);

  // b's session is intact: listed, running, and answers b.
  auto b_list = call_as(&env.b, socket(), "ListSessions", v1::ListSessionsRequest());
  ASSERT_TRUE(b_list.ok()) << b_list.raw;
  auto sessions = b_list.response<v1::ListSessionsResponse>();
  ASSERT_EQ(sessions.sessions_size(), 1) << b_list.raw;
  EXPECT_EQ(sessions.sessions(0).session_id(), id);
  EXPECT_EQ(sessions.sessions(0).owner_uid(), env.b.uid);
  EXPECT_TRUE(sessions.sessions(0).running());

  // Root is an admin: it sees every uid's sessions.
  auto root_list = call_as(nullptr, socket(), "ListSessions", all);
  ASSERT_TRUE(root_list.ok()) << root_list.raw;
  EXPECT_EQ(root_list.response<v1::ListSessionsResponse>().sessions_size(), 1);

  v1::WriteStdinRequest b_write;
  b_write.set_session_id(id);
  b_write.set_chars("from-b\n");
  b_write.set_yield_time_ms(2000);
  auto echoed = call_as(&env.b, socket(), "WriteStdin", b_write);
  ASSERT_TRUE(echoed.ok()) << echoed.raw;
  auto out = echoed.response<v1::ExecResult>().output();
  EXPECT_THAT(out, HasSubstr("from-b"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("from-a")));

  v1::CancelRequest b_cancel;
  b_cancel.set_session_id(id);
  b_cancel.set_mode(v1::CancelRequest::KILL);
  auto cancelled = call_as(&env.b, socket(), "Cancel", b_cancel);
  ASSERT_EQ(cancelled.code, kOk) << cancelled.raw;
  EXPECT_TRUE(cancelled.response<v1::CancelResponse>().was_running());
}

// Approvals: b's command waits for a reviewer; who may see and answer it depends on config.
enum class Reviewers { kNone, kUid, kGroup };

class ApprovalIsolation : public Isolation, public ::testing::WithParamInterface<Reviewers> {
 protected:
  static constexpr const char* kRules = "prefix_rule(pattern = [\"touch\"], decision = \"prompt\")\n";

  // Waits (as root, an admin) until a request of `uid` is pending; returns its id.
  std::string wait_for_request(uid_t uid) {
    auto stub = v1::Approvals::NewStub(grpc::CreateChannel("unix:" + socket(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    auto reader = stub->WatchApprovals(&ctx, v1::WatchApprovalsRequest());
    v1::ApprovalEvent event;
    std::string id;
    while (id.empty() && reader->Read(&event)) {
      if (event.has_added() && event.added().requester_uid() == uid) id = event.added().approval_id();
    }
    ctx.TryCancel();
    reader->Finish();
    return id;
  }

  std::unique_ptr<BackgroundProcess> request_touch(const TestUser& user, const std::string& ws, const std::string& file) {
    v1::ExecCommandRequest exec;
    exec.add_argv("touch");
    exec.add_argv(file);
    exec.set_workdir(ws);
    exec.set_yield_time_ms(10000);
    return std::make_unique<BackgroundProcess>(&user,
                                               std::vector<std::string>{rpc_client_binary(), socket(), "ExecCommand", to_json(exec)});
  }
};

TEST_P(ApprovalIsolation, OthersApprovalsNeedAReviewerRole) {
  REQUIRE_SYSTEM_ENV();
  std::string tail;
  if (GetParam() == Reviewers::kUid) tail = "[approvals]\nreviewer_uids = [" + std::to_string(env.a.uid) + "]\n";
  if (GetParam() == Reviewers::kGroup) tail = "[approvals]\nreviewer_group = \"" + env.extra_group + "\"\n";
  start(tail, kRules);
  const bool a_reviews = GetParam() != Reviewers::kNone;
  const std::string file = "approved-" + std::to_string(static_cast<int>(GetParam()));
  std::filesystem::remove(env.b_ws + "/" + file);

  auto pending = request_touch(env.b, env.b_ws, file);
  const std::string id = wait_for_request(env.b.uid);
  ASSERT_FALSE(id.empty()) << daemon_->log();

  auto listed = call_as(&env.a, socket(), "ListApprovals", v1::ListApprovalsRequest());
  ASSERT_TRUE(listed.ok()) << listed.raw;
  auto approvals = listed.response<v1::ListApprovalsResponse>();
  EXPECT_EQ(approvals.approvals_size(), a_reviews ? 1 : 0) << listed.raw;

  v1::ResolveApprovalRequest approve;
  approve.set_approval_id(id);
  approve.set_decision(v1::APPROVED);
  auto resolved = call_as(&env.a, socket(), "ResolveApproval", approve);
  if (!a_reviews) {
    // The same answer as for an id that does not exist (issue 17 item 4): a foreign pending
    // approval's existence does not leak.
    EXPECT_EQ(resolved.code, kNotFound) << resolved.raw;
    EXPECT_EQ(resolved.message, "no pending approval " + id);
    // Still pending, and b (the requester) may answer it.
    v1::ResolveApprovalRequest deny;
    deny.set_approval_id(id);
    deny.set_decision(v1::DENIED);
    auto own = call_as(&env.b, socket(), "ResolveApproval", deny);
    ASSERT_EQ(own.code, kOk) << own.raw;
    auto result = parse_rpc_output(pending->wait());
    ASSERT_TRUE(result.ok()) << result.raw;
    auto r = result.response<v1::ExecResult>();
    EXPECT_EQ(r.rejection().reason(), v1::Rejection::DENIED_BY_REVIEWER) << result.raw;
    EXPECT_FALSE(std::filesystem::exists(env.b_ws + "/" + file));
    return;
  }
  ASSERT_EQ(resolved.code, kOk) << resolved.raw;
  auto result = parse_rpc_output(pending->wait());
  ASSERT_TRUE(result.ok()) << result.raw;
  auto r = result.response<v1::ExecResult>();
  ASSERT_TRUE(r.has_exit_code()) << result.raw;
  EXPECT_EQ(r.exit_code(), 0) << r.output();
  // Approved by a, still run as b.
  struct stat st {};
  ASSERT_EQ(::stat((env.b_ws + "/" + file).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, env.b.uid);
  std::filesystem::remove(env.b_ws + "/" + file);

  // The role is one-way: b is not a reviewer of a's requests.
  auto a_pending = request_touch(env.a, env.a_ws, file);
  const std::string a_id = wait_for_request(env.a.uid);
  ASSERT_FALSE(a_id.empty());
  auto b_sees = call_as(&env.b, socket(), "ListApprovals", v1::ListApprovalsRequest());
  EXPECT_EQ(b_sees.response<v1::ListApprovalsResponse>().approvals_size(), 0) << b_sees.raw;
  v1::ResolveApprovalRequest b_approve;
  b_approve.set_approval_id(a_id);
  b_approve.set_decision(v1::APPROVED);
  EXPECT_EQ(call_as(&env.b, socket(), "ResolveApproval", b_approve).code, kNotFound);
  b_approve.set_decision(v1::DENIED);
  ASSERT_EQ(call_as(&env.a, socket(), "ResolveApproval", b_approve).code, kOk);
  EXPECT_EQ(parse_rpc_output(a_pending->wait()).response<v1::ExecResult>().rejection().reason(),
            v1::Rejection::DENIED_BY_REVIEWER);
}

INSTANTIATE_TEST_SUITE_P(Reviewers, ApprovalIsolation,
                         ::testing::Values(Reviewers::kNone, Reviewers::kUid, Reviewers::kGroup),
                         [](const auto& info) {
                           switch (info.param) {
                             case Reviewers::kNone: return std::string("NoReviewerConfigured");
                             case Reviewers::kUid: return std::string("ReviewerUids");
                             case Reviewers::kGroup: return std::string("ReviewerGroup");
                           }
                           return std::string();
                         });

}  // namespace
}  // namespace codexd::testing

namespace codexd::testing {
namespace {

// The private /tmp is per uid too (same agent label, two users): b's command does not see what
// a's wrote, and on the host a's directory is a's alone, 0700, below root-owned parents.
TEST_F(Isolation, PrivateTmpIsPerUid) {
  REQUIRE_SYSTEM_ENV();
  start();
  const std::string name = "codexd-pt-" + std::to_string(::getpid());
  auto run = [&](const TestUser& user, const std::string& ws, const std::string& script) {
    v1::RunCommandRequest request;
    request.add_argv("/bin/sh");
    request.add_argv("-c");
    request.add_argv(script);
    request.set_workdir(ws);
    auto outcome = call_as(&user, socket(), "RunCommand", request);
    EXPECT_TRUE(outcome.ok()) << outcome.raw;
    return outcome.response<v1::RunCommandResponse>();
  };
  auto a_wrote = run(env.a, env.a_ws, "echo from-a > /tmp/" + name + " && cat /tmp/" + name);
  ASSERT_EQ(a_wrote.exit_code(), 0) << a_wrote.aggregated_output();
  EXPECT_EQ(a_wrote.stdout(), "from-a\n");
  auto b_read = run(env.b, env.b_ws, "cat /tmp/" + name);
  EXPECT_NE(b_read.exit_code(), 0) << "b saw a's private /tmp: " << b_read.aggregated_output();
  EXPECT_FALSE(std::filesystem::exists("/tmp/" + name)) << "it landed in the host /tmp";

  auto status = call_as(&env.a, socket(), "GetStatus", v1::GetStatusRequest());
  ASSERT_TRUE(status.ok()) << status.raw;
  auto dirs = status.response<v1::GetStatusResponse>().private_tmp().dirs();
  ASSERT_EQ(dirs.size(), 1) << status.raw << " (a sees only its own)";
  const std::string dir = dirs[0].path();
  EXPECT_EQ(dir.rfind(dir_ + "/private-tmp/" + std::to_string(env.a.uid) + "/", 0), 0u) << dir;
  struct stat st {};
  ASSERT_EQ(::lstat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, env.a.uid);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  const std::string parent = std::filesystem::path(dir).parent_path().string();
  ASSERT_EQ(::lstat(parent.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_mode & 07777, 0711u);
  EXPECT_EQ(run_as_user(env.a, {"/bin/cat", dir + "/" + name}).out, "from-a\n") << "a reaches it on the host";
  EXPECT_NE(run_as_user(env.b, {"/bin/cat", dir + "/" + name}).exit_code, 0) << "b read a's private /tmp on the host";
  EXPECT_NE(run_as_user(env.b, {"/bin/ls", parent}).exit_code, 0) << "b listed a's agents";
}

}  // namespace
}  // namespace codexd::testing
