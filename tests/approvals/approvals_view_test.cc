// `codexctl approvals` on a terminal: the live full-screen view, driven as a person would, in
// tmux (its own server on a private socket): requests from another client appear on the
// screen, keys answer them (approve once, deny with a reason), a command with a newline, a
// quote and a space is shown unambiguously, a desktop notification goes out through
// notify-send, a resize redraws, a restarted daemon is reconnected to, and q or SIGTERM end
// the view with the terminal restored.
//
// tmux has no event for "the screen changed", so the screen is read with capture-pane every
// 100 ms until it shows what is expected, for at most 30 s (a failure prints the last screen).
// Everything else waits on events: the gRPC calls, inotify for the notification log.
#include <signal.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "tests/approvals/approvals_test_util.h"

namespace codexd::testing::approvals {
namespace {

using ::testing::HasSubstr;

constexpr std::chrono::seconds kScreenGuard{30};

constexpr const char* kRules = R"(
prefix_rule(pattern=["mkdir"], decision="prompt", justification="creates directories")
prefix_rule(pattern=["echo"], decision="prompt", justification="the view test asks about echo")
)";

// Terminal columns of what capture-pane printed (one per code point: the view's text here).
size_t columns(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0) return dir + "/" + name;
  }
  return "";
}

// A tmux server of this test's own (socket and config in `dir`), killed at the end, with one
// session "view" of 160x40.
class Tmux {
 public:
  Tmux(std::string binary, const std::string& dir) : binary_(std::move(binary)), socket_(dir + "/tmux.sock") {
    config_ = dir + "/tmux.conf";
    std::ofstream(config_) << "set -g status off\n";
  }
  ~Tmux() { run({"kill-server"}); }
  Tmux(const Tmux&) = delete;
  Tmux& operator=(const Tmux&) = delete;

  ProcessResult run(std::vector<std::string> args) const {
    args.insert(args.begin(), {binary_, "-S", socket_, "-f", config_});
    return run_process(args);
  }
  // Starts `argv` in the session under sh, which then prints "exit=<its status>" and stays
  // (tmux itself may lose a dead pane's status and last output); NAME=VALUE `env` is added by
  // env(1) (tmux would put its own client's PATH over new-session -e PATH=).
  bool start(const std::vector<std::string>& argv, const std::vector<std::string>& env = {}) const {
    std::vector<std::string> args = {"new-session", "-d", "-s", "view", "-x", "160", "-y", "40", "/usr/bin/env"};
    args.insert(args.end(), env.begin(), env.end());
    args.insert(args.end(), {"/bin/sh", "-c", "\"$@\"; echo \"exit=$?\"; exec sleep 600", "sh"});
    args.insert(args.end(), argv.begin(), argv.end());
    const auto result = run(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.exit_code == 0;
  }
  std::string screen() const { return run({"capture-pane", "-p", "-t", "view"}).out; }
  std::string format(const std::string& format) const {
    std::string out = run({"display-message", "-p", "-t", "view", format}).out;
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
  void keys(const std::string& key) const { run({"send-keys", "-t", "view", key}); }
  void text(const std::string& text) const { run({"send-keys", "-t", "view", "-l", text}); }

  // The screen once `shows` is true of it (or the last one, after the guard, with a failure).
  template <typename Predicate>
  std::string wait_until(Predicate shows, const std::string& what) const {
    const auto limit = std::chrono::steady_clock::now() + kScreenGuard;
    std::string last = screen();
    while (!shows(last)) {
      if (std::chrono::steady_clock::now() > limit) {
        ADD_FAILURE() << "the screen never showed " << what << " within " << kScreenGuard.count() << " s; it shows:\n"
                      << last;
        return last;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // tmux has no event for a change
      last = screen();
    }
    return last;
  }
  std::string wait_for(const std::string& needle) const {
    return wait_until([&](const std::string& s) { return s.find(needle) != std::string::npos; }, "\"" + needle + "\"");
  }

  // The program started by start(): the one child of the pane's sh.
  pid_t program_pid() const {
    const std::string sh = format("#{pane_pid}");
    std::ifstream children("/proc/" + sh + "/task/" + sh + "/children");
    pid_t pid = -1;
    children >> pid;
    return pid;
  }
  // Waits for the program to end (its "exit=" line): its exit status (128+N for signal N),
  // and the screen then.
  std::pair<int, std::string> wait_for_exit() const {
    const std::string screen = wait_for("exit=");
    const size_t at = screen.find("exit=");
    return {at == std::string::npos ? -1 : std::atoi(screen.c_str() + at + 5), screen};
  }

 private:
  std::string binary_, socket_, config_;
};

class ApprovalsView : public DaemonTest {
 protected:
  ApprovalsView() : DaemonTest(untrusted_with_rules(kRules)) {}

  void SetUp() override {
    DaemonTest::SetUp();
    if (HasFatalFailure()) return;
    const std::string binary = find_on_path("tmux");
    if (binary.empty()) GTEST_SKIP() << "tmux is not installed (apt-get install tmux; scripts/deps.sh lists it)";
    tmux_ = std::make_unique<Tmux>(binary, daemon_.dir());
  }
  std::string failure_context() const override { return tmux_ ? "\nlast screen:\n" + tmux_->screen() : ""; }

  std::vector<std::string> view_command(std::vector<std::string> extra = {}) const {
    std::vector<std::string> argv = {TestDaemon::codexctl_binary(), "--socket", daemon_.socket_path(), "approvals"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }
  // Starts the view and waits until it has the daemon's list.
  void open_view(std::vector<std::string> extra = {}, const std::vector<std::string>& env = {}) {
    ASSERT_TRUE(tmux_->start(view_command(std::move(extra)), env));
    tmux_->wait_for("0 pending");
  }
  std::unique_ptr<PendingExec> request(std::vector<std::string> argv) {
    return exec_async(agent_, exec_request(ws(), std::move(argv)));
  }

  // Ends a test's waiting request from outside the view.
  void deny_the_pending_request() {
    const auto pending = agent_.list();
    ASSERT_EQ(pending.size(), 1u);
    ASSERT_TRUE(agent_.resolve(pending[0].approval_id(), v1::DENIED).ok());
  }

  std::unique_ptr<Tmux> tmux_;
  Client agent_{daemon_, "agent-a"};
};

TEST_F(ApprovalsView, ApproveOnceRunsTheCommandAndItsOutputComesBack) {
  open_view({"--no-notify"});
  auto call = request({"echo", "approved-output"});
  const std::string screen = tmux_->wait_for("> apr_");
  EXPECT_THAT(screen, HasSubstr("1 pending"));
  EXPECT_THAT(screen, HasSubstr("agent-a"));
  EXPECT_THAT(screen, HasSubstr("command    echo approved-output"));
  EXPECT_THAT(screen, HasSubstr("cwd        " + ws()));
  EXPECT_THAT(screen, HasSubstr("rule       PROMPT by rule echo at "));
  EXPECT_THAT(screen, HasSubstr("the view test asks about echo"));
  EXPECT_THAT(screen, HasSubstr("sandbox    LINUX_BWRAP, workspace-write"));
  tmux_->keys("a");
  ASSERT_TRUE(call->wait());
  ASSERT_TRUE(call->status().ok()) << call->status().error_message();
  EXPECT_EQ(call->response().exit_code(), 0);
  EXPECT_EQ(call->response().output(), "approved-output\n");
  const std::string after = tmux_->wait_for("0 pending");
  EXPECT_THAT(after, HasSubstr(": approved once"));
}

TEST_F(ApprovalsView, DenyWithAReasonReachesTheRequester) {
  open_view({"--no-notify"});
  auto call = request({"mkdir", "denied-here"});
  tmux_->wait_for("> apr_");
  tmux_->keys("d");
  tmux_->wait_for("reason (Enter sends, Esc cancels):");
  tmux_->text("use make instead");
  tmux_->wait_for("Esc cancels): use make instead");
  tmux_->keys("Enter");
  ASSERT_TRUE(call->wait());
  EXPECT_EQ(call->response().rejection().reason(), v1::Rejection::DENIED_BY_REVIEWER);
  EXPECT_EQ(call->response().text(), "rejected by user: use make instead");
  EXPECT_FALSE(exists(ws("denied-here")));
  tmux_->wait_for("denied (reason: use make instead)");
}

TEST_F(ApprovalsView, ACommandWithANewlineAQuoteAndASpaceIsShownUnambiguously) {
  open_view({"--no-notify"});
  auto call = request({"mkdir", "a b", "x\ny", "it's"});
  // One line, every word quoted as bash reads it back ('x'$'\n''y' is x, newline, y).
  const std::string shown = "mkdir 'a b' 'x'$'\\n''y' 'it'\\''s'";
  const std::string screen = tmux_->wait_for("command    " + shown);
  EXPECT_THAT(screen, HasSubstr("> apr_"));
  tmux_->keys("d");
  tmux_->wait_for("reason (Enter sends");
  tmux_->keys("Escape");
  tmux_->wait_for("not denied (cancelled; nothing was sent)");
  EXPECT_FALSE(call->returned()) << "Esc sends nothing: the request still waits";
  tmux_->keys("x");
  tmux_->wait_for("abort apr_");
  tmux_->keys("Enter");
  ASSERT_TRUE(call->wait());
  EXPECT_EQ(call->response().rejection().reason(), v1::Rejection::ABORTED);
}

TEST_F(ApprovalsView, ANewRequestIsANotificationThroughNotifySend) {
  // A stand-in notify-send that logs its arguments, first on PATH; DISPLAY set for the view.
  const std::string bin = daemon_.dir() + "/fake-bin", log = daemon_.dir() + "/notify.log";
  ASSERT_EQ(::mkdir(bin.c_str(), 0755), 0);
  std::ofstream(bin + "/notify-send") << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> " << log << "\n";
  ASSERT_EQ(::chmod((bin + "/notify-send").c_str(), 0755), 0);
  std::ofstream(log).close();
  const char* path = std::getenv("PATH");
  open_view({}, {"DISPLAY=:99", "PATH=" + bin + ":" + (path ? path : "/usr/bin:/bin")});
  tmux_->wait_for("desktop notifications on (notify-send)");
  auto call = request({"mkdir", "<b>notified</b>"});
  ASSERT_EQ(wait_for_lines(log, 3), 3u) << slurp(log);
  EXPECT_EQ(slurp(log), "--\ncodexd: approval needed\nagent-a: mkdir '&lt;b&gt;notified&lt;/b&gt;'\n");
  deny_the_pending_request();
  ASSERT_TRUE(call->wait());
}

TEST_F(ApprovalsView, AResizeRedrawsAtTheNewSize) {
  open_view({"--no-notify"});
  auto call = request({"mkdir", "resized"});
  tmux_->wait_for("> apr_");
  tmux_->run({"resize-window", "-t", "view", "-x", "120", "-y", "30"});
  // The keys on the title line end at the right edge: at column 120 only after a redraw (tmux
  // cuts the old 160-column line, whose keys were beyond 120).
  const auto title = [](const std::string& s) { return s.substr(0, s.find('\n')); };
  const std::string screen = tmux_->wait_until(
      [&](const std::string& s) { return title(s).ends_with("q quit"); }, "the title redrawn at 120 columns");
  EXPECT_EQ(columns(title(screen)), 120u) << screen;
  deny_the_pending_request();
  ASSERT_TRUE(call->wait());
}

TEST_F(ApprovalsView, WhenTheDaemonGoesAwayItSaysSoAndReconnects) {
  open_view({"--no-notify"});
  ASSERT_EQ(daemon_.stop(), 0);
  tmux_->wait_for("DISCONNECTED, retrying");
  ASSERT_TRUE(daemon_.restart()) << daemon_.daemon_log();
  // Back on the new daemon's stream: a new request shows, and the view answers it.
  auto call = request({"echo", "after-restart"});
  tmux_->wait_for("command    echo after-restart");
  tmux_->wait_for("> apr_");
  tmux_->keys("a");
  ASSERT_TRUE(call->wait());
  EXPECT_EQ(call->response().output(), "after-restart\n");
}

TEST_F(ApprovalsView, QEndsTheViewAndRestoresTheTerminal) {
  open_view({"--no-notify"});
  EXPECT_EQ(tmux_->format("#{alternate_on}"), "1") << "the view runs on the alternate screen";
  tmux_->keys("q");
  const auto [status, screen] = tmux_->wait_for_exit();
  EXPECT_EQ(status, 0);
  EXPECT_EQ(tmux_->format("#{alternate_on}"), "0") << "the shell's screen is back";
  EXPECT_THAT(screen, ::testing::Not(HasSubstr("codexd approvals")));
}

TEST_F(ApprovalsView, SigtermEndsTheViewAndRestoresTheTerminal) {
  open_view({"--no-notify"});
  const pid_t pid = tmux_->program_pid();
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  EXPECT_EQ(tmux_->wait_for_exit().first, 128 + SIGTERM);
  EXPECT_EQ(tmux_->format("#{alternate_on}"), "0");
}

TEST_F(ApprovalsView, NoTuiPrintsThePlainListOnATerminal) {
  ASSERT_TRUE(tmux_->start(view_command({"--no-tui"})));
  const auto [status, screen] = tmux_->wait_for_exit();
  EXPECT_EQ(status, 0);
  EXPECT_THAT(screen, HasSubstr("no pending approvals\nexit=0"));
  EXPECT_EQ(tmux_->format("#{alternate_on}"), "0") << "no full screen";
}

}  // namespace
}  // namespace codexd::testing::approvals
