// Issue 13 item 4: pending approvals and approved-for-session grants survive a daemon restart
// or crash (<state_dir>/approvals.json). The requester's RPC dies with the old daemon; it asks
// again with the same request (uid, agent id, call_id, argv, workdir) and gets the restored
// approval: still pending (same id, no duplicate for reviewers) or already decided.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <dirent.h>

#include <fstream>

#include "tests/approvals/approvals_test_util.h"

namespace codexd::testing::approvals {
namespace {

using ::testing::HasSubstr;

constexpr const char* kRules = R"(
prefix_rule(pattern=["fence-cmd"], decision="prompt", justification="a test fence")
prefix_rule(pattern=["mkdir"], decision="prompt", justification="creates directories")
)";

TestDaemonOptions restart_options() { return untrusted_with_rules(kRules); }

// Waits (hang guard) until `path` contains `text`, woken by inotify on every change.
bool wait_for_text(const std::string& path, const std::string& text) {
  int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd < 0) return slurp(path).find(text) != std::string::npos;
  ::inotify_add_watch(fd, path.c_str(), IN_MODIFY | IN_CLOSE_WRITE);
  const auto limit = std::chrono::steady_clock::now() + kGuard;
  bool found = slurp(path).find(text) != std::string::npos;
  while (!found && std::chrono::steady_clock::now() < limit) {
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, 1000);
    char buf[4096];
    while (::read(fd, buf, sizeof buf) > 0) {
    }
    found = slurp(path).find(text) != std::string::npos;
  }
  ::close(fd);
  return found;
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
  }
  return names;
}

enum class Down { kCrash, kStop };

class ApprovalsAfterRestart : public DaemonTest {
 protected:
  ApprovalsAfterRestart() : DaemonTest(restart_options()) {}

  std::string state_dir() const { return daemon_.dir() + "/state"; }
  std::string log_path() const { return daemon_.dir() + "/codexd.log"; }

  // mkdir prompts by rule; its -v output proves the command ran.
  v1::ExecCommandRequest make(const std::string& name, const std::string& call_id) const {
    auto req = exec_request(ws(), {"mkdir", "-p", "-v", name});
    req.set_call_id(call_id);
    return req;
  }

  // Leaves `request` pending (as agent `agent`) and brings the daemon down; returns the id.
  std::string pending_then_down(const v1::ExecCommandRequest& request, Down how, const std::string& agent = "agent-a") {
    Reviewer reviewer(daemon_);
    EXPECT_TRUE(reviewer.synced().empty());
    Client client(daemon_, agent);
    auto call = exec_async(client, request);
    const std::string id = reviewer.added().approval_id();
    EXPECT_FALSE(id.empty());
    if (how == Down::kCrash) {
      EXPECT_EQ(daemon_.crash(), 128 + 9);
    } else {
      EXPECT_EQ(daemon_.stop(), 0);
    }
    EXPECT_TRUE(call->wait());
    // Crash: the RPC died with the daemon; stop: it was told the daemon is shutting down.
    if (call->status().ok()) {
      EXPECT_EQ(call->response().rejection().reason(), v1::Rejection::ABORTED);
    }
    return id;
  }

  void restart() { ASSERT_TRUE(daemon_.restart()) << daemon_.daemon_log(); }

  void pending_survives(Down how) {
    const auto request = make("survivor", "call-1");
    const std::string id = pending_then_down(request, how);
    restart();
    Client agent(daemon_, "agent-a");
    Reviewer reviewer(daemon_);
    auto snapshot = reviewer.synced();
    ASSERT_EQ(snapshot.size(), 1u);
    EXPECT_EQ(snapshot[0].approval_id(), id);
    EXPECT_EQ(snapshot[0].agent_id(), "agent-a");
    EXPECT_TRUE(std::equal(snapshot[0].argv().begin(), snapshot[0].argv().end(), request.argv().begin(),
                           request.argv().end()));
    EXPECT_EQ(snapshot[0].workdir(), ws());
    EXPECT_EQ(snapshot[0].reason().justification(), "creates directories");
    auto listed = agent.list();
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_EQ(listed[0].approval_id(), id);
    EXPECT_EQ(listed[0].created_at_unix_ms(), snapshot[0].created_at_unix_ms());

    // The requester asks again and waits on the same approval.
    auto again = exec_async(agent, request);
    ASSERT_TRUE(wait_for_text(log_path(), "approval " + id + " (restored) claimed by its requester's repeated request; waiting"));
    EXPECT_FALSE(again->returned());
    ASSERT_TRUE(reviewer.resolve(id, v1::APPROVED).ok());
    ASSERT_TRUE(again->wait());
    ASSERT_TRUE(again->status().ok()) << again->status().error_message();
    const auto& res = again->response();
    EXPECT_FALSE(res.has_rejection()) << res.DebugString();
    EXPECT_EQ(res.exit_code(), 0);
    EXPECT_THAT(res.output(), HasSubstr("created directory"));
    EXPECT_EQ(res.sandbox(), v1::SANDBOX_LINUX_BWRAP) << "an approved command runs through the sandbox as usual";
    EXPECT_TRUE(exists(ws("survivor")));
    EXPECT_EQ(reviewer.resolved().approval_id(), id);
    // No duplicate reached the reviewer.
    expect_no_event_before_fence(reviewer, agent, ws());
    // The audit log recorded the restart.
    const std::string audit = slurp(daemon_.audit_log_path());
    EXPECT_THAT(audit, HasSubstr("\"event\":\"approvals_restored\""));
    EXPECT_THAT(audit, HasSubstr("\"pending_restored\":1"));
  }
};

TEST_F(ApprovalsAfterRestart, APendingApprovalSurvivesACrashAndTheRepeatedRequestWaitsOnIt) {
  pending_survives(Down::kCrash);
}

TEST_F(ApprovalsAfterRestart, APendingApprovalSurvivesAStopAndTheRepeatedRequestWaitsOnIt) {
  pending_survives(Down::kStop);
}

TEST_F(ApprovalsAfterRestart, ResolvedWhileTheRequesterIsAwayTheRepeatedRequestGetsTheDenialAtOnce) {
  const auto request = make("denied", "call-1");
  const std::string id = pending_then_down(request, Down::kCrash);
  restart();
  Reviewer reviewer(daemon_);
  ASSERT_EQ(reviewer.synced().size(), 1u);
  ASSERT_TRUE(reviewer.resolve(id, v1::DENIED, "not now").ok());
  EXPECT_EQ(reviewer.resolved().approval_id(), id);
  EXPECT_TRUE(reviewer.client().list().empty());

  Client agent(daemon_, "agent-a");
  auto res = agent.exec_ok(request);  // returns at once: nobody is asked again
  ASSERT_TRUE(res.has_rejection()) << res.DebugString();
  EXPECT_EQ(res.rejection().reason(), v1::Rejection::DENIED_BY_REVIEWER);
  EXPECT_FALSE(exists(ws("denied")));
  EXPECT_THAT(slurp(log_path()), HasSubstr("approval " + id + " (restored) claimed by its requester's repeated request; already resolved"));
  expect_no_event_before_fence(reviewer, agent, ws());
  // Claimed once: the same request again is a new question.
  expect_asked_then_denied(reviewer, agent, request);
}

TEST_F(ApprovalsAfterRestart, AnotherAgentOrAnotherCallDoesNotGetTheRestoredApproval) {
  const auto request = make("mine", "call-1");
  const std::string id = pending_then_down(request, Down::kCrash);
  restart();
  Reviewer reviewer(daemon_);
  ASSERT_EQ(reviewer.synced().size(), 1u);

  // Another agent id, same everything else: its own question.
  Client other(daemon_, "agent-b");
  auto theirs = exec_async(other, request);
  auto asked = reviewer.added();
  EXPECT_NE(asked.approval_id(), id);
  EXPECT_EQ(asked.agent_id(), "agent-b");
  // The same agent with another call id: its own question too.
  Client agent(daemon_, "agent-a");
  auto other_call = make("mine", "call-2");
  auto second = exec_async(agent, other_call);
  auto asked2 = reviewer.added();
  EXPECT_NE(asked2.approval_id(), id);
  EXPECT_NE(asked2.approval_id(), asked.approval_id());
  EXPECT_EQ(agent.list().size(), 3u);

  // The restored one is still pending and approving it runs nothing for them.
  ASSERT_TRUE(reviewer.resolve(id, v1::APPROVED).ok());
  EXPECT_EQ(reviewer.resolved().approval_id(), id);
  EXPECT_FALSE(exists(ws("mine")));
  ASSERT_TRUE(reviewer.resolve(asked.approval_id(), v1::DENIED).ok());
  ASSERT_TRUE(reviewer.resolve(asked2.approval_id(), v1::DENIED).ok());
  ASSERT_TRUE(theirs->wait());
  ASSERT_TRUE(second->wait());
  EXPECT_EQ(theirs->response().rejection().reason(), v1::Rejection::DENIED_BY_REVIEWER);
  EXPECT_EQ(second->response().rejection().reason(), v1::Rejection::DENIED_BY_REVIEWER);
  EXPECT_FALSE(exists(ws("mine")));

  // The rightful requester still gets its approval.
  auto res = agent.exec_ok(request);
  EXPECT_FALSE(res.has_rejection()) << res.DebugString();
  EXPECT_THAT(res.output(), HasSubstr("created directory"));
}

TEST_F(ApprovalsAfterRestart, AnApprovedForSessionGrantSurvivesACrash) {
  {
    Reviewer reviewer(daemon_);
    reviewer.synced();
    Client agent(daemon_, "agent-a");
    auto first = exec_async(agent, make("session-a", "call-1"));
    auto asked = reviewer.added();
    ASSERT_TRUE(reviewer.resolve(asked.approval_id(), v1::APPROVED_FOR_SESSION).ok());
    ASSERT_TRUE(first->wait());
    EXPECT_EQ(first->response().exit_code(), 0);
  }
  ::rmdir(ws("session-a").c_str());
  EXPECT_EQ(daemon_.crash(), 128 + 9);
  restart();
  Reviewer reviewer(daemon_);
  EXPECT_TRUE(reviewer.synced().empty());
  Client agent(daemon_, "agent-a");
  auto again = agent.exec_ok(make("session-a", "call-2"));  // no question: it would block here
  EXPECT_FALSE(again.has_rejection()) << again.DebugString();
  EXPECT_EQ(again.exit_code(), 0);
  EXPECT_TRUE(exists(ws("session-a")));
  expect_no_event_before_fence(reviewer, agent, ws());
  // Scoped as before: another agent and another command still ask.
  Client other(daemon_, "agent-b");
  expect_asked_then_denied(reviewer, other, make("session-a", "call-3"));
  reviewer.resolved();
  expect_asked_then_denied(reviewer, agent, make("session-b", "call-4"));
  EXPECT_THAT(slurp(daemon_.audit_log_path()), HasSubstr("\"grants_restored\":1"));
}

class CorruptState : public ApprovalsAfterRestart, public ::testing::WithParamInterface<std::string> {};

TEST_P(CorruptState, IsMovedAsideAndTheDaemonStartsWithNone) {
  EXPECT_EQ(daemon_.stop(), 0);
  ::mkdir(state_dir().c_str(), 0700);
  const std::string file = state_dir() + "/approvals.json";
  {
    std::ofstream out(file, std::ios::trunc);
    out << GetParam();
  }
  restart();
  // The reason is logged with the path, and the file moved aside.
  const std::string log = slurp(log_path());
  EXPECT_THAT(log, HasSubstr("approval state " + file + " is unusable"));
  std::vector<std::string> corrupt;
  for (const auto& n : list_dir(state_dir())) {
    if (n.rfind("approvals.json.corrupt-", 0) == 0) corrupt.push_back(n);
  }
  ASSERT_EQ(corrupt.size(), 1u) << ::testing::PrintToString(list_dir(state_dir()));
  EXPECT_EQ(slurp(state_dir() + "/" + corrupt[0]), GetParam());
  EXPECT_THAT(log, HasSubstr("moved to " + state_dir() + "/" + corrupt[0]));
  EXPECT_THAT(slurp(daemon_.audit_log_path()), HasSubstr("\"event\":\"approval_state_corrupt\""));
  // Approvals work, and are saved again.
  Reviewer reviewer(daemon_);
  EXPECT_TRUE(reviewer.synced().empty());
  Client agent(daemon_, "agent-a");
  auto call = exec_async(agent, make("after", "call-1"));
  const std::string id = reviewer.added().approval_id();
  EXPECT_THAT(slurp(state_dir() + "/approvals.d/" + id + ".json"), HasSubstr("\"call-1\""));
  ASSERT_TRUE(reviewer.resolve(id, v1::DENIED).ok());
  ASSERT_TRUE(call->wait());
}

INSTANTIATE_TEST_SUITE_P(Files, CorruptState,
                         ::testing::Values(std::string("garbage \x01\x02 not json"),
                                           std::string("{\"version\": 1, \"approvals\": [{\"id\": \"apr_1\""),
                                           std::string("{\"version\": 2, \"approvals\": [], \"grants\": []}")));

TEST_F(ApprovalsAfterRestart, TheStateFileIsPrivate) {
  const std::string id = pending_then_down(make("private", "call-1"), Down::kCrash);
  struct stat st {};
  ASSERT_EQ(::lstat((state_dir() + "/approvals.d").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  const std::string file = state_dir() + "/approvals.d/" + id + ".json";
  ASSERT_EQ(::lstat(file.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_THAT(slurp(file), HasSubstr(id));
  restart();
}

}  // namespace
}  // namespace codexd::testing::approvals
