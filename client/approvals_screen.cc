#include "client/approvals_screen.h"

#include <algorithm>

#include "client/approvals_format.h"

namespace codexd::client {
namespace {

constexpr size_t kMinRows = 8;
constexpr size_t kMinCols = 40;
constexpr size_t kLabelWidth = 11;
constexpr const char* kKeys = "a once · s session · r remember · d deny · x abort · q quit";

// Left-aligned `left` and right-aligned `right` on one line of `cols` columns (right dropped
// when both do not fit).
std::string spread(const std::string& left, const std::string& right, size_t cols) {
  const size_t left_width = display_width(left), right_width = display_width(right);
  if (left_width + 2 + right_width > cols) return fit_to_width(left, cols);
  return left + std::string(cols - left_width - right_width, ' ') + right;
}

ScreenLine title_line(const ApprovalsState& state, const ScreenContext& context, size_t cols) {
  if (!state.connected() && state.ever_synced()) {
    return {fit_to_width("codexd approvals · DISCONNECTED, " + state.connection_problem(), cols), LineStyle::kWarning};
  }
  std::string left = "codexd approvals · ";
  if (!state.ever_synced()) {
    left += state.connection_problem().empty() ? "connecting to " + visible_text(context.socket) + "…"
                                               : state.connection_problem();
  } else {
    left += std::to_string(state.pending().size()) + " pending";
  }
  return {spread(left, kKeys, cols), LineStyle::kTitle};
}

// The first row of the list shown: the selection stays in view.
size_t first_row_shown(const ApprovalsState& state, size_t list_rows) {
  auto at = state.selected_index();
  return at && *at >= list_rows ? *at - list_rows + 1 : 0;
}

void add_list(Screen& screen, const ApprovalsState& state, const ScreenContext& context, size_t list_rows, size_t cols) {
  const auto& pending = state.pending();
  const size_t first = first_row_shown(state, list_rows);
  std::string range;
  if (pending.size() > list_rows) {
    range = std::to_string(first + 1) + "-" + std::to_string(std::min(pending.size(), first + list_rows)) + " of " +
            std::to_string(pending.size());
  }
  const std::string columns = "  " + pad_to_width("ID", 21) + " " + pad_to_width("AGENT", 14) + " " +
                              pad_to_width("WAITED", 7) + " COMMAND";
  screen.lines.push_back({spread(columns, range, cols), LineStyle::kHeading});
  if (pending.empty()) {
    screen.lines.push_back({fit_to_width(state.ever_synced() ? "  no pending approvals: waiting for requests…" : "", cols)});
    return;
  }
  const auto selected = state.selected_index();
  for (size_t i = first; i < first + list_rows && i < pending.size(); ++i) {
    const bool is_selected = selected && *selected == i;
    screen.lines.push_back({(is_selected ? "> " : "  ") + approval_row(pending[i], context.now_ms, cols - 2),
                            is_selected ? LineStyle::kSelected : LineStyle::kPlain});
  }
}

// The selected request's details, at most `rows` lines.
void add_details(Screen& screen, const ApprovalsState& state, const ScreenContext& context, size_t rows, size_t cols) {
  const v1::ApprovalRequest* request = state.selected();
  if (!request) {
    screen.lines.push_back({"── details", LineStyle::kHeading});
    if (!state.pending().empty()) screen.lines.push_back({fit_to_width("  nothing selected: pick a request with ↑/↓ (or j/k)", cols)});
    return;
  }
  screen.lines.push_back({fit_to_width("── details of " + visible_text(request->approval_id()), cols), LineStyle::kHeading});
  const std::string user = context.user_name ? context.user_name(request->requester_uid()) : "";
  std::vector<std::string> lines;
  for (const auto& entry : approval_details(*request, context.now_ms, user)) {
    std::string label = pad_to_width(entry.label, kLabelWidth);
    for (const auto& part : wrap_to_width(entry.text, cols - kLabelWidth)) {
      lines.push_back(label + part);
      label = std::string(kLabelWidth, ' ');
    }
  }
  if (lines.size() > rows) {
    lines.resize(rows);
    if (rows > 0) lines.back() = "… (more: make the window taller)";
  }
  for (auto& line : lines) screen.lines.push_back({std::move(line)});
}

// The end of `text` that fits in `width` columns, after an ellipsis when cut.
std::string fit_tail(const std::string& text, size_t width) {
  if (display_width(text) <= width) return text;
  size_t start = text.size();
  while (start > 0) {
    size_t before = start - 1;
    while (before > 0 && (static_cast<unsigned char>(text[before]) & 0xC0) == 0x80) --before;
    if (display_width(std::string_view(text).substr(before)) + 1 > width) break;
    start = before;
  }
  return "…" + text.substr(start);
}

void add_bottom_line(Screen& screen, const ApprovalsState& state, size_t cols) {
  const auto& prompt = state.reason_prompt();
  if (!prompt) {
    screen.lines.push_back({fit_to_width(state.status(), cols), LineStyle::kStatus});
    return;
  }
  const std::string prefix = std::string(prompt->decision == v1::ABORT ? "abort " : "deny ") +
                             visible_text(prompt->approval_id) + ", reason (Enter sends, Esc cancels): ";
  const size_t prefix_width = std::min(display_width(prefix), cols / 2);
  const std::string line = fit_to_width(prefix, prefix_width) +
                           fit_tail(visible_text(prompt->rationale), cols - prefix_width - 1);
  screen.lines.push_back({line, LineStyle::kPrompt});
  screen.cursor_column = display_width(line);
}

}  // namespace

Screen render_screen(const ApprovalsState& state, const ScreenContext& context, size_t rows, size_t cols) {
  Screen screen;
  if (rows == 0 || cols == 0) return screen;
  if (rows < kMinRows || cols < kMinCols) {
    screen.lines.push_back({fit_to_width("too small (need 40x8)", cols)});
  } else {
    screen.lines.push_back(title_line(state, context, cols));
    const size_t content_rows = rows - 4;  // title, list heading, details heading, status
    const size_t list_rows = std::clamp(state.pending().size(), size_t{1}, std::max(size_t{1}, content_rows / 3));
    add_list(screen, state, context, list_rows, cols);
    while (screen.lines.size() < 2 + list_rows) screen.lines.push_back({});
    add_details(screen, state, context, content_rows - list_rows, cols);
  }
  while (screen.lines.size() < rows - 1) screen.lines.push_back({});
  screen.lines.resize(rows - 1);
  add_bottom_line(screen, state, cols);
  return screen;
}

}  // namespace codexd::client
