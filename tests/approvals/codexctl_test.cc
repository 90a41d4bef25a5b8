// codexctl as a reviewer: `approvals` (list), `approve ID [--for-session]`, `deny ID [--abort]`,
// `approvals watch` (plain output without a terminal; prompts on a pseudo-terminal), and
// `codexctl exec` answering its own approval inline on a terminal or waiting without one.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>

#include "tests/approvals/approvals_test_util.h"
#include "tests/support/wait_exit.h"

namespace codexd::testing::approvals {
namespace {

using ::testing::HasSubstr;

constexpr const char* kRules = R"(
prefix_rule(pattern=["mkdir"], decision="prompt", justification="creates directories")
prefix_rule(pattern=["touch"], decision="allow")
)";

// A child process whose output we read as it comes: on a pseudo-terminal (stdin, stdout and
// stderr are the pty; it is the controlling terminal) or on a pipe (stdin a pipe too).
class Child {
 public:
  Child(const std::vector<std::string>& argv, bool pty) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (pty) {
      pid_ = ::forkpty(&fd_, nullptr, nullptr, nullptr);
      if (pid_ == 0) {
        ::execv(args[0], args.data());
        _exit(127);
      }
      input_ = fd_;
      return;
    }
    int out[2], in[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(in, O_CLOEXEC) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::dup2(out[1], 2);
      ::execv(args[0], args.data());
      _exit(127);
    }
    ::close(out[1]);
    ::close(in[0]);
    fd_ = out[0];
    input_ = in[1];
  }
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      wait();
    }
    if (fd_ >= 0) ::close(fd_);
    if (input_ >= 0 && input_ != fd_) ::close(input_);
  }

  // Reads until `needle` appears after `from` (hang guard). Returns its position or npos.
  size_t read_until(const std::string& needle, size_t from = 0) {
    const auto limit = std::chrono::steady_clock::now() + kGuard;
    for (;;) {
      size_t at = output_.find(needle, from);
      if (at != std::string::npos) return at;
      if (std::chrono::steady_clock::now() > limit) return std::string::npos;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 1000) <= 0) continue;
      char buf[4096];
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) return output_.find(needle, from);  // EOF / EIO: the child closed its side
      output_.append(buf, static_cast<size_t>(n));
    }
  }
  void write(const std::string& text) { (void)!::write(input_, text.data(), text.size()); }
  void close_input() {
    if (input_ >= 0 && input_ != fd_) ::close(input_);
    input_ = -1;
  }
  void signal(int sig) { ::kill(pid_, sig); }
  // Exit code (128+signal), reading the rest of the output meanwhile.
  int wait() {
    read_until("\x01never\x02");  // drains to EOF (or the guard)
    int code = wait_exit_code(pid_);
    reaped_ = true;
    return code;
  }
  const std::string& output() const { return output_; }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  int input_ = -1;
  bool reaped_ = false;
  std::string output_;
};

class Codexctl : public DaemonTest {
 protected:
  Codexctl() : DaemonTest(untrusted_with_rules(kRules)) {}
  void SetUp() override {
    DaemonTest::SetUp();
    if (HasFatalFailure()) return;
    reviewer_ = std::make_unique<Reviewer>(daemon_);
    reviewer_->synced();
  }
  std::vector<std::string> ctl(std::vector<std::string> args) const {
    std::vector<std::string> argv = {TestDaemon::codexctl_binary(), "--socket", daemon_.socket_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  // An agent's `mkdir NAME` waiting for approval, and its request as the reviewer saw it.
  std::pair<std::unique_ptr<PendingExec>, v1::ApprovalRequest> waiting_mkdir(const std::string& name) {
    auto call = exec_async(agent_, exec_request(ws(), {"mkdir", name}));
    auto request = reviewer_->added();
    return {std::move(call), request};
  }

  std::unique_ptr<Reviewer> reviewer_;
  Client agent_{daemon_, "agent-a"};
};

TEST_F(Codexctl, ApprovalsListsPendingRequests) {
  auto empty = daemon_.codexctl({"approvals"});
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_EQ(empty.out, "no pending approvals\n");

  auto [call, request] = waiting_mkdir("listed");
  auto listed = daemon_.codexctl({"approvals"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr("approval " + request.approval_id() + " (uid " + std::to_string(::geteuid()) + ", agent agent-a)"));
  EXPECT_THAT(listed.out, HasSubstr("command: mkdir listed"));
  EXPECT_THAT(listed.out, HasSubstr("in:      " + ws()));
  EXPECT_THAT(listed.out, HasSubstr("a prompt rule matched"));
  EXPECT_THAT(listed.out, HasSubstr("rule:    mkdir -> PROMPT: creates directories"));
  EXPECT_THAT(listed.out, HasSubstr("sandbox: SANDBOX_LINUX_BWRAP workspace-write"));
  EXPECT_EQ(daemon_.codexctl({"approvals", "list"}).out, listed.out);

  auto json = daemon_.codexctl({"--json", "approvals"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto parsed = nlohmann::json::parse(json.out);
  ASSERT_EQ(parsed["approvals"].size(), 1u);
  EXPECT_EQ(parsed["approvals"][0]["approval_id"], request.approval_id());
  EXPECT_EQ(parsed["approvals"][0]["agent_id"], "agent-a");
  ASSERT_TRUE(reviewer_->resolve(request.approval_id(), v1::DENIED).ok());
  ASSERT_TRUE(call->wait());
}

TEST_F(Codexctl, ApproveRunsTheCommandAndASecondAnswerFails) {
  auto [call, request] = waiting_mkdir("approved");
  auto approve = daemon_.codexctl({"approve", request.approval_id()});
  EXPECT_EQ(approve.exit_code, 0) << approve.err;
  EXPECT_EQ(approve.out, request.approval_id() + ": APPROVED\n");
  ASSERT_TRUE(call->wait());
  EXPECT_EQ(call->response().exit_code(), 0);
  EXPECT_TRUE(exists(ws("approved")));
  auto resolved = reviewer_->resolved();
  EXPECT_EQ(resolved.decision(), v1::APPROVED);
  EXPECT_EQ(resolved.resolved_by_uid(), ::geteuid());

  auto again = daemon_.codexctl({"deny", request.approval_id()});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_THAT(again.err, HasSubstr("already resolved"));
  auto unknown = daemon_.codexctl({"approve", "apr_0000000000000000"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("no pending approval"));
  auto usage = daemon_.codexctl({"approve"});
  EXPECT_EQ(usage.exit_code, 2);
}

TEST_F(Codexctl, ApproveForSessionIsRememberedForThatAgent) {
  auto [call, request] = waiting_mkdir("session");
  auto approve = daemon_.codexctl({"approve", request.approval_id(), "--for-session"});
  EXPECT_EQ(approve.exit_code, 0) << approve.err;
  EXPECT_EQ(approve.out, request.approval_id() + ": APPROVED_FOR_SESSION\n");
  ASSERT_TRUE(call->wait());
  EXPECT_EQ(reviewer_->resolved().decision(), v1::APPROVED_FOR_SESSION);
  ::rmdir(ws("session").c_str());
  auto again = agent_.exec_ok(exec_request(ws(), {"mkdir", "session"}));
  EXPECT_EQ(again.exit_code(), 0) << "no second prompt";
  EXPECT_TRUE(exists(ws("session")));
}

TEST_F(Codexctl, DenyAndDenyAbort) {
  {
    auto [call, request] = waiting_mkdir("denied");
    auto deny = daemon_.codexctl({"deny", request.approval_id(), "--reason", "use make"});
    EXPECT_EQ(deny.exit_code, 0) << deny.err;
    EXPECT_EQ(deny.out, request.approval_id() + ": DENIED\n");
    ASSERT_TRUE(call->wait());
    EXPECT_EQ(call->response().rejection().reason(), v1::Rejection::DENIED_BY_REVIEWER);
    EXPECT_EQ(call->response().text(), "rejected by user: use make");
    reviewer_->resolved();
  }
  {
    auto [call, request] = waiting_mkdir("aborted");
    // --json: what was resolved and how, as JSON.
    auto deny = daemon_.codexctl({"--json", "deny", request.approval_id(), "--abort", "--reason", "stop"});
    EXPECT_EQ(deny.exit_code, 0) << deny.err;
    auto resolved = nlohmann::json::parse(deny.out, nullptr, false);
    ASSERT_FALSE(resolved.is_discarded()) << deny.out;
    EXPECT_EQ(resolved["approval_id"], request.approval_id());
    EXPECT_EQ(resolved["decision"], "ABORT");
    EXPECT_EQ(resolved["rationale"], "stop");
    ASSERT_TRUE(call->wait());
    EXPECT_EQ(call->response().rejection().reason(), v1::Rejection::ABORTED);
    EXPECT_EQ(reviewer_->resolved().decision(), v1::ABORT);
  }
  EXPECT_FALSE(exists(ws("denied")));
  EXPECT_FALSE(exists(ws("aborted")));
}

TEST_F(Codexctl, ApprovalsWatchWithoutATerminalPrintsTheLiveList) {
  auto [early, early_request] = waiting_mkdir("early");
  Child watch(ctl({"approvals", "watch"}), /*pty=*/false);
  size_t synced = watch.read_until("-- watching for approval requests --");
  ASSERT_NE(synced, std::string::npos) << watch.output();
  size_t early_at = watch.output().find("approval " + early_request.approval_id());
  EXPECT_LT(early_at, synced) << "pending requests come before the marker:\n" << watch.output();

  auto [late, late_request] = waiting_mkdir("late");
  ASSERT_NE(watch.read_until("approval " + late_request.approval_id(), synced), std::string::npos) << watch.output();
  ASSERT_NE(watch.read_until("command: mkdir late", synced), std::string::npos);
  ASSERT_TRUE(reviewer_->resolve(late_request.approval_id(), v1::APPROVED).ok());
  ASSERT_NE(watch.read_until(late_request.approval_id() + " resolved: APPROVED (reviewer)"), std::string::npos) << watch.output();
  early->cancel();
  ASSERT_NE(watch.read_until(early_request.approval_id() + " resolved: ABORT (requester_disconnected)"), std::string::npos)
      << watch.output();
  ASSERT_TRUE(late->wait());
  EXPECT_EQ(late->response().exit_code(), 0);
  watch.signal(SIGTERM);
  watch.wait();
}

TEST_F(Codexctl, ApprovalsWatchJsonPrintsOneEventPerLine) {
  Child watch(ctl({"--json", "approvals", "watch"}), /*pty=*/false);
  ASSERT_NE(watch.read_until("\"synced\""), std::string::npos) << watch.output();
  auto [call, request] = waiting_mkdir("json");
  ASSERT_NE(watch.read_until(request.approval_id()), std::string::npos);
  ASSERT_TRUE(reviewer_->resolve(request.approval_id(), v1::DENIED).ok());
  ASSERT_NE(watch.read_until("\"resolution_source\""), std::string::npos) << watch.output();
  ASSERT_TRUE(call->wait());
  watch.signal(SIGTERM);
  watch.wait();
  std::istringstream lines(watch.output());
  int added = 0, resolved = 0;
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
    added += j.contains("added");
    resolved += j.contains("resolved");
  }
  EXPECT_EQ(added, 1);
  EXPECT_EQ(resolved, 1);
}

TEST_F(Codexctl, ApprovalsWatchOnATerminalAsksAndAnswers) {
  Child watch(ctl({"approvals", "watch"}), /*pty=*/true);
  ASSERT_NE(watch.read_until("watching approvals"), std::string::npos) << watch.output();
  // The interactive watcher is a reviewer now; the request reaches both.
  auto [call, request] = waiting_mkdir("from-tty");
  size_t prompt = watch.read_until("approve? [y]es once / [s]ession / [n]o / [a]bort");
  ASSERT_NE(prompt, std::string::npos) << watch.output();
  EXPECT_NE(watch.output().find("command: mkdir from-tty"), std::string::npos) << watch.output();
  watch.write("y\r");
  ASSERT_TRUE(call->wait());
  EXPECT_EQ(call->response().exit_code(), 0);
  EXPECT_TRUE(exists(ws("from-tty")));
  auto resolved = reviewer_->resolved();
  EXPECT_EQ(resolved.decision(), v1::APPROVED);
  EXPECT_EQ(resolved.resolution_source(), "reviewer");

  // A request answered elsewhere interrupts the prompt.
  auto [second, second_request] = waiting_mkdir("elsewhere");
  ASSERT_NE(watch.read_until("approve?", prompt + 1), std::string::npos) << watch.output();
  ASSERT_TRUE(reviewer_->resolve(second_request.approval_id(), v1::DENIED).ok());
  ASSERT_NE(watch.read_until("(answered elsewhere)"), std::string::npos) << watch.output();
  ASSERT_TRUE(second->wait());
  EXPECT_EQ(second->response().rejection().reason(), v1::Rejection::DENIED_BY_REVIEWER);
  watch.signal(SIGTERM);
  watch.wait();
}

TEST_F(Codexctl, ExecOnATerminalAnswersItsOwnApprovalInline) {
  {
    Child exec(ctl({"exec", "-C", ws(), "--", "mkdir", "inline-yes"}), /*pty=*/true);
    auto request = reviewer_->added();
    EXPECT_EQ(request.agent_id(), "codexctl");
    ASSERT_NE(exec.read_until("approve?"), std::string::npos) << exec.output();
    exec.write("y\r");
    EXPECT_EQ(exec.wait(), 0) << exec.output();
    EXPECT_TRUE(exists(ws("inline-yes")));
    EXPECT_EQ(reviewer_->resolved().decision(), v1::APPROVED);
  }
  {
    Child exec(ctl({"exec", "-C", ws(), "--", "mkdir", "inline-no"}), /*pty=*/true);
    reviewer_->added();
    ASSERT_NE(exec.read_until("approve?"), std::string::npos) << exec.output();
    exec.write("n\r");
    EXPECT_EQ(exec.wait(), 125) << exec.output();
    EXPECT_THAT(exec.output(), HasSubstr("rejected by user"));
    EXPECT_FALSE(exists(ws("inline-no")));
  }
}

TEST_F(Codexctl, ExecOnATerminalAnswersTheRetryQuestionInline) {
  // touch is allowed by rule and ls is known-safe: attempt 1 runs sandboxed without a question,
  // is denied writing outside, and the retry question comes to the terminal. (The denial is
  // judged on a process that exits within the first wait: a non-login shell, a long --yield-ms.)
  OutsideDir outside;
  const std::string target = outside.path() + "/inline-retry";
  Child exec(ctl({"exec", "-C", ws(), "--yield-ms", "30000", "--", "bash", "-c", "touch " + target + " && ls"}),
             /*pty=*/true);
  auto request = reviewer_->added();
  EXPECT_EQ(request.reason().kind(), v1::ApprovalReason::SANDBOX_RETRY);
  ASSERT_NE(exec.read_until("retry WITHOUT the sandbox?"), std::string::npos) << exec.output();
  ASSERT_NE(exec.read_until("approve?"), std::string::npos) << exec.output();
  exec.write("y\r");
  EXPECT_EQ(exec.wait(), 0) << exec.output();
  EXPECT_TRUE(exists(target));
}

TEST_F(Codexctl, ApprovalsWatchOnATerminalApprovesForTheSession) {
  Child watch(ctl({"approvals", "watch"}), /*pty=*/true);
  ASSERT_NE(watch.read_until("watching approvals"), std::string::npos) << watch.output();
  auto [call, request] = waiting_mkdir("watch-session");
  ASSERT_NE(watch.read_until("approve?"), std::string::npos) << watch.output();
  watch.write("s\r");
  ASSERT_TRUE(call->wait());
  EXPECT_EQ(reviewer_->resolved().decision(), v1::APPROVED_FOR_SESSION);
  ::rmdir(ws("watch-session").c_str());
  auto again = agent_.exec_ok(exec_request(ws(), {"mkdir", "watch-session"}));
  EXPECT_EQ(again.exit_code(), 0) << "approved for the session: no second prompt";
  watch.signal(SIGTERM);
  watch.wait();
}

// Nobody to ask here: codexctl says which approval it waits for and how to answer it (it
// once waited in silence), then how it was answered.
TEST_F(Codexctl, ExecWithoutATerminalWaitsForAReviewerAndSaysSo) {
  Child exec(ctl({"exec", "-C", ws(), "--", "mkdir", "waited"}), /*pty=*/false);
  auto request = reviewer_->added();
  EXPECT_EQ(request.agent_id(), "codexctl");
  EXPECT_EQ(request.argv(1), "waited");
  const std::string& id = request.approval_id();
  ASSERT_NE(exec.read_until("codexctl: waiting for approval " + id + "; answer with `codexctl approve " + id +
                            "` or `codexctl deny " + id + "`\n"),
            std::string::npos)
      << exec.output();
  ASSERT_TRUE(reviewer_->resolve(id, v1::APPROVED).ok());
  EXPECT_EQ(exec.wait(), 0) << exec.output();
  EXPECT_TRUE(exists(ws("waited")));
  EXPECT_THAT(exec.output(), HasSubstr("codexctl: " + id + ": APPROVED\n"));
  EXPECT_THAT(exec.output(), ::testing::Not(HasSubstr("approve?")));
}

// --no-prompt on a terminal: the waiting line is live, with the time waited.
TEST_F(Codexctl, ExecWithNoPromptOnATerminalKeepsALiveWaitingLine) {
  Child exec(ctl({"exec", "--no-prompt", "-C", ws(), "--", "mkdir", "live"}), /*pty=*/true);
  auto request = reviewer_->added();
  const std::string& id = request.approval_id();
  const std::string line = "\r\033[Kcodexctl: waiting for approval " + id + " (";
  const size_t first = exec.read_until(line + "0s)");
  ASSERT_NE(first, std::string::npos) << exec.output();
  // The line is redrawn each second: the next drawing (an event on the terminal) counts on.
  const size_t next = exec.read_until(line, first + 1);
  ASSERT_NE(next, std::string::npos) << exec.output();
  EXPECT_GE(std::atoi(exec.output().c_str() + next + line.size()), 1) << exec.output();
  EXPECT_THAT(exec.output(), ::testing::Not(HasSubstr("approve?")));
  ASSERT_TRUE(reviewer_->resolve(id, v1::DENIED).ok());
  EXPECT_EQ(exec.wait(), 125) << exec.output();
  EXPECT_THAT(exec.output(), HasSubstr("codexctl: " + id + ": DENIED"));
}

// A terminal session's first output (the remote terminal's \r\n) is written with the local
// terminal raw already: in cooked mode each line once ended in \r\r\n.
TEST_F(Codexctl, TtyOutputOfTheFirstWaitKeepsItsLineEndings) {
  Child exec(ctl({"exec", "--tty", "-C", ws(), "--", "echo", "first"}), /*pty=*/true);
  EXPECT_EQ(exec.wait(), 0) << exec.output();
  EXPECT_THAT(exec.output(), HasSubstr("first\r\n"));
  EXPECT_THAT(exec.output(), ::testing::Not(HasSubstr("\r\r\n")));
}

}  // namespace
}  // namespace codexd::testing::approvals
