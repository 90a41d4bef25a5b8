// The layout of the live approvals view as lines of text, from its state and the terminal's
// size: a title, the list (one row per pending request, the selected one marked), the
// selected request's details, and the status line (or the reason being typed). No escape
// sequences here: the caller styles each line by its kind.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "client/approvals_state.h"

namespace codexd::client {

enum class LineStyle { kPlain, kTitle, kWarning, kHeading, kSelected, kStatus, kPrompt };

struct ScreenLine {
  std::string text;  // at most the screen's width, in columns
  LineStyle style = LineStyle::kPlain;
};

struct Screen {
  std::vector<ScreenLine> lines;       // exactly `rows` of them
  std::optional<size_t> cursor_column;  // on the last line, while a reason is typed
};

struct ScreenContext {
  int64_t now_ms = 0;  // the wall clock, for the time each request has waited
  std::string socket;  // shown while connecting
  std::function<std::string(uint32_t)> user_name;  // a uid's login name, "" when unknown (may be unset)
};

Screen render_screen(const ApprovalsState& state, const ScreenContext& context, size_t rows, size_t cols);

}  // namespace codexd::client
