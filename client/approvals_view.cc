// codexctl approvals on a terminal: the live, full-screen view of the pending approvals.
//
// One thread draws and reads keys (this file); ApprovalsFeed follows the WatchApprovals
// stream on another and wakes the loop through a pipe, which also carries the signals the
// view handles itself (resize, SIGTERM, SIGHUP, SIGINT). Nothing polls the daemon: the screen
// changes on events, and once a second for the time each request has waited.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>

#include "client/approvals_feed.h"
#include "client/approvals_format.h"
#include "client/approvals_screen.h"
#include "client/approvals_state.h"
#include "client/commands.h"
#include "client/desktop_notifier.h"
#include "client/terminal.h"
#include "client/terminal_keys.h"

namespace codexd::client {
namespace {

constexpr auto kAnswerDeadline = std::chrono::seconds(10);
constexpr const char* kNotificationSummary = "codexd: approval needed";

// The write end of the wake pipe, for the signal handlers.
volatile int g_wake_fd = -1;

void forward_signal(int sig) {
  if (g_wake_fd < 0) return;
  const int saved_errno = errno;
  const char byte = static_cast<char>(sig);  // never 0, which is the feed's byte
  (void)!::write(g_wake_fd, &byte, 1);
  errno = saved_errno;
}

int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void write_all(int fd, const std::string& text) {
  size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

const char* style_sequence(LineStyle style) {
  switch (style) {
    case LineStyle::kTitle: return "\x1b[1;7m";
    case LineStyle::kWarning: return "\x1b[1;37;41m";
    case LineStyle::kHeading: return "\x1b[1m";
    case LineStyle::kSelected: return "\x1b[7m";
    case LineStyle::kPrompt: return "\x1b[1m";
    default: return "";
  }
}

// Each line in place (no clear: no flicker), the rest of it erased in its own style.
std::string screen_sequence(const Screen& screen) {
  std::string out = "\x1b[?25l";
  for (size_t i = 0; i < screen.lines.size(); ++i) {
    out += "\x1b[" + std::to_string(i + 1) + ";1H" + style_sequence(screen.lines[i].style) + screen.lines[i].text +
           "\x1b[K\x1b[0m";
  }
  if (screen.cursor_column) {
    out += "\x1b[" + std::to_string(screen.lines.size()) + ";" + std::to_string(*screen.cursor_column + 1) + "H\x1b[?25h";
  }
  return out;
}

// Login names from /etc/passwd only: codexctl is a static binary and never uses NSS
// (client/CMakeLists.txt), so a directory-service user shows as its uid alone.
class UserNames {
 public:
  std::string operator()(uint32_t uid) {
    auto [it, inserted] = names_.try_emplace(uid);
    if (inserted) it->second = lookup(uid);
    return it->second;
  }

 private:
  static std::string lookup(uint32_t uid) {
    std::ifstream passwd("/etc/passwd");
    const std::string wanted = std::to_string(uid);
    for (std::string line; std::getline(passwd, line);) {
      const size_t name_end = line.find(':');
      const size_t uid_at = line.find(':', name_end == std::string::npos ? line.size() : name_end + 1);
      if (uid_at == std::string::npos) continue;
      const size_t uid_end = line.find(':', uid_at + 1);
      if (line.substr(uid_at + 1, uid_end - uid_at - 1) == wanted) return line.substr(0, name_end);
    }
    return "";
  }
  std::map<uint32_t, std::string> names_;
};

class ApprovalsView {
 public:
  ApprovalsView(const ClientOptions& options, const std::shared_ptr<grpc::Channel>& channel, int wake_read_fd,
                int wake_write_fd, bool notify)
      : options_(options), stub_(v1::Approvals::NewStub(channel)), wake_read_fd_(wake_read_fd), notifier_(notify),
        feed_(channel, options, wake_write_fd) {
    state_.set_status(notifier_.active() ? "desktop notifications on (notify-send)" : notifier_.why_inactive());
  }

  // Until q, Ctrl-C, a signal or the end of the terminal: the exit code.
  int run() {
    for (;;) {
      redraw();
      pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {wake_read_fd_, POLLIN, 0}};
      if (::poll(fds, 2, poll_timeout_ms()) < 0 && errno != EINTR) return kExitRpcError;
      if (fds[1].revents & POLLIN) drain_wake_pipe();
      if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) read_keys();
      notifier_.reap();
      if (exit_code_) return *exit_code_;
      if (state_.quit()) return 0;
    }
  }

 private:
  // To the next whole second while something waits (its counter ticks); else until an event.
  int poll_timeout_ms() const {
    if (state_.pending().empty()) return -1;
    return static_cast<int>(1000 - wall_clock_ms() % 1000) + 1;
  }

  void redraw() {
    const WindowSize size = terminal_size(STDOUT_FILENO).value_or(WindowSize{});
    ScreenContext context{wall_clock_ms(), options_.socket, std::ref(user_names_)};
    write_all(STDOUT_FILENO, screen_sequence(render_screen(state_, context, size.rows, size.cols)));
  }

  void drain_wake_pipe() {
    char bytes[64];
    ssize_t n;
    while ((n = ::read(wake_read_fd_, bytes, sizeof bytes)) > 0) {
      for (ssize_t i = 0; i < n; ++i) {
        const int sig = bytes[i];
        if (sig == SIGTERM || sig == SIGHUP || sig == SIGINT) exit_code_ = 128 + sig;
        // SIGWINCH needs nothing more: every wake-up redraws at the current size.
      }
    }
    for (auto& update : feed_.take()) apply(update);
  }

  void apply(const FeedUpdate& update) {
    switch (update.kind) {
      case FeedUpdate::Kind::kStreamStarted: state_.stream_started(); return;
      case FeedUpdate::Kind::kStreamLost: state_.disconnected(update.problem); return;
      case FeedUpdate::Kind::kEvent: break;
    }
    const auto& event = update.event;
    if (event.has_added()) {
      if (state_.added(event.added())) notifier_.notify(kNotificationSummary, notification_body(event.added()));
    } else if (event.has_resolved()) {
      state_.resolved(event.resolved());
    } else if (event.has_synced()) {
      state_.synced();
    }
  }

  void read_keys() {
    char bytes[4096];
    const ssize_t n = ::read(STDIN_FILENO, bytes, sizeof bytes);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
      exit_code_ = 0;  // the terminal is gone
      return;
    }
    if (n < 0) return;
    for (const Key& key : decode_keys(std::string_view(bytes, static_cast<size_t>(n)))) {
      if (auto answer = state_.on_key(key)) send(*answer);
      if (state_.quit()) return;
    }
  }

  // ResolveApproval, on this thread: the reviewer sees "sending" until codexd answers (at most
  // kAnswerDeadline); the request leaves the list when its `resolved` event comes.
  void send(const Answer& answer) {
    state_.set_status(visible_text(answer.approval_id) + ": sending the answer…");
    redraw();
    grpc::ClientContext context;
    prepare(context, options_);
    context.set_deadline(std::chrono::system_clock::now() + kAnswerDeadline);
    v1::ResolveApprovalRequest request;
    request.set_approval_id(answer.approval_id);
    request.set_decision(answer.decision);
    request.set_rationale(answer.rationale);
    v1::ResolveApprovalResponse response;
    const grpc::Status status = stub_->ResolveApproval(&context, request, &response);
    state_.answer_sent(answer, status.ok() ? std::nullopt : std::optional<std::string>(rpc_error_text(status)));
  }

  const ClientOptions& options_;
  std::unique_ptr<v1::Approvals::Stub> stub_;
  int wake_read_fd_;
  ApprovalsState state_;
  DesktopNotifier notifier_;
  UserNames user_names_;
  std::optional<int> exit_code_;
  ApprovalsFeed feed_;  // last: its thread stops (destructor) before the rest goes
};

// The pipe the feed and the signal handlers wake the loop with; both ends non-blocking.
class WakePipe {
 public:
  WakePipe() {
    if (::pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) fds_[0] = fds_[1] = -1;
  }
  ~WakePipe() {
    for (int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  WakePipe(const WakePipe&) = delete;
  WakePipe& operator=(const WakePipe&) = delete;
  bool ok() const { return fds_[0] >= 0; }
  int read_fd() const { return fds_[0]; }
  int write_fd() const { return fds_[1]; }

 private:
  int fds_[2] = {-1, -1};
};

// While it lives, the signals the view handles itself go to the wake pipe as their number;
// then the handlers before it (FullScreen's restore-and-die) are back.
class SignalForwarding {
 public:
  explicit SignalForwarding(int wake_fd) {
    g_wake_fd = wake_fd;
    struct sigaction action {};
    action.sa_handler = forward_signal;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &action, &previous_[i]);
  }
  ~SignalForwarding() {
    for (size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &previous_[i], nullptr);
    g_wake_fd = -1;
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

 private:
  static constexpr std::array<int, 4> kSignals = {SIGWINCH, SIGTERM, SIGHUP, SIGINT};
  std::array<struct sigaction, 4> previous_{};
};

// A channel that notices a restarted daemon within seconds (gRPC's own reconnect backoff
// grows to two minutes).
std::shared_ptr<grpc::Channel> reconnecting_channel(const ClientOptions& options) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 250);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 250);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  return connect(options, args);
}

}  // namespace

bool can_show_full_screen() {
  const char* term = std::getenv("TERM");
  return ::isatty(STDIN_FILENO) && ::isatty(STDOUT_FILENO) && term && *term && std::strcmp(term, "dumb") != 0;
}

int run_approvals_view(const ClientOptions& options, bool desktop_notifications) {
  auto channel = reconnecting_channel(options);
  // Reachable, and may list approvals? Said plainly before the screen is taken.
  v1::ListApprovalsResponse first_page;
  const grpc::Status reachable =
      call_unary<v1::Approvals>(options, channel, &v1::Approvals::Stub::ListApprovals, v1::ListApprovalsRequest(), &first_page);
  if (!reachable.ok()) return report_rpc_error(reachable, options);
  WakePipe wake;
  if (!wake.ok()) {
    std::fprintf(stderr, "codexctl: cannot make a pipe: %s\n", std::strerror(errno));
    return kExitRpcError;
  }
  FullScreen screen;
  SignalForwarding signals(wake.write_fd());  // after FullScreen: over its restore-and-die handlers
  ApprovalsView view(options, channel, wake.read_fd(), wake.write_fd(), desktop_notifications);
  return view.run();
}

}  // namespace codexd::client
