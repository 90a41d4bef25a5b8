// The local terminal for `codexctl exec --tty`: raw mode that is restored on every exit path.
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
  static void restore_now();  // async-signal-safe

 private:
  bool active_ = false;
};

}  // namespace codexd::client
