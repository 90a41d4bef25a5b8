// The local terminal for `codexctl exec --tty` and the live views: raw mode (and the alternate
// screen) restored on every exit path.
#pragma once

#include <termios.h>

#include <optional>

namespace codexd::client {

struct WindowSize {
  unsigned short rows = 24;
  unsigned short cols = 80;
};

// The size of the terminal on `fd`, if it is one.
std::optional<WindowSize> terminal_size(int fd);

// Puts stdin in raw mode; the destructor, std::exit handlers and fatal signals restore it.
// Nested, an inner one changes nothing and leaves the restoring to the outer one.
class RawTerminal {
 public:
  RawTerminal();
  ~RawTerminal();
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;
  bool active() const { return active_; }
  // Leaves the alternate screen (if a FullScreen entered it) and restores the saved mode.
  static void restore_now();  // async-signal-safe

 private:
  bool active_ = false;
};

// A full-screen view: raw input, the alternate screen (the shell's screen comes back
// unchanged), no cursor. Restored by the destructor, exit_process and fatal signals, like
// RawTerminal. Inactive when stdin is not a terminal.
class FullScreen {
 public:
  FullScreen();
  ~FullScreen();
  FullScreen(const FullScreen&) = delete;
  FullScreen& operator=(const FullScreen&) = delete;
  bool active() const { return raw_.active(); }

 private:
  RawTerminal raw_;
};

}  // namespace codexd::client
