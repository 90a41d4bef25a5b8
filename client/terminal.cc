#include "client/terminal.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

namespace codexd::client {
namespace {

struct termios g_saved;
volatile sig_atomic_t g_raw = 0;
volatile sig_atomic_t g_alternate_screen = 0;

constexpr char kEnterFullScreen[] = "\x1b[?1049h\x1b[?25l";  // alternate screen, cursor hidden
constexpr char kLeaveFullScreen[] = "\x1b[?25h\x1b[?1049l";

void leave_alternate_screen() {
  if (g_alternate_screen) {
    (void)!::write(STDOUT_FILENO, kLeaveFullScreen, sizeof kLeaveFullScreen - 1);
    g_alternate_screen = 0;
  }
}

void restore_and_reraise(int sig) {
  RawTerminal::restore_now();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

std::optional<WindowSize> terminal_size(int fd) {
  struct winsize ws {};
  if (::ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0 || ws.ws_col == 0) return std::nullopt;
  return WindowSize{ws.ws_row, ws.ws_col};
}

void RawTerminal::restore_now() {
  leave_alternate_screen();
  if (g_raw) {
    ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &g_saved);
    g_raw = 0;
  }
}

RawTerminal::RawTerminal() {
  if (g_raw) return;  // raw already, by an outer RawTerminal: that one restores
  if (!::isatty(STDIN_FILENO) || ::tcgetattr(STDIN_FILENO, &g_saved) != 0) return;
  struct termios raw = g_saved;
  ::cfmakeraw(&raw);
  if (::tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) != 0) return;
  g_raw = 1;
  active_ = true;
  std::atexit(restore_now);
  for (int sig : {SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS}) ::signal(sig, restore_and_reraise);
}

RawTerminal::~RawTerminal() {
  if (active_) restore_now();
}

FullScreen::FullScreen() {
  if (!raw_.active()) return;
  (void)!::write(STDOUT_FILENO, kEnterFullScreen, sizeof kEnterFullScreen - 1);
  g_alternate_screen = 1;
}

FullScreen::~FullScreen() { leave_alternate_screen(); }

}  // namespace codexd::client
