// The text of `codexctl approvals` (the live view): how a pending request is shown in a row,
// in the detail pane and in a desktop notification. Pure functions, no terminal: every field
// that an agent or a rules file chose is made safe and unambiguous on one terminal line here.
#pragma once

#include <grpcpp/support/status.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/shell_quote.h"
#include "codexd/v1/approvals.pb.h"

namespace codexd::client {

// shell_quote(word), kept on one line: a newline (which shell_quote leaves inside its quotes)
// becomes $'\n' between closed quotes, so `'a'$'\n''b'` reads back as the same word in bash,
// zsh and ksh and shows where the newline is.
std::string quote_word_on_one_line(std::string_view word);

// Each word quoted on one line, joined by spaces: what runs, unambiguously.
template <typename Range>
std::string quote_command_on_one_line(const Range& words) {
  return join_quoted(words, [](std::string_view word) { return quote_word_on_one_line(word); });
}

// Free text (a label, a justification, a rule's file name) for one terminal line: a control
// character, an invalid UTF-8 byte or a bidi/zero-width code point becomes a visible escape
// (\n, \t, \r, \e, \xHH, \u{202E}), and a backslash is doubled so an escape cannot be faked.
std::string visible_text(std::string_view text);

// Terminal columns of safe text: 2 for East Asian wide characters and emoji, 0 for combining
// marks, 1 otherwise.
size_t display_width(std::string_view text);
// At most `width` columns; a cut ends in "…".
std::string fit_to_width(std::string_view text, size_t width);
// `text` padded with spaces (or cut) to exactly `width` columns.
std::string pad_to_width(std::string_view text, size_t width);
// Lines of at most `width` columns, broken at a space where one is close, else anywhere
// between code points.
std::vector<std::string> wrap_to_width(std::string_view text, size_t width);

// "7s", "4m05s", "2h13m", "3d04h" (negative counts as 0).
std::string format_duration(int64_t ms);

// Why a request asks, for a person.
const char* approval_reason_text(v1::ApprovalReason::Kind kind);
// What a decision does, for the status line: "approved once", "denied", ...
std::string decision_text(v1::ReviewDecision decision);
// How a request left the list when this view did not answer it ("denied by uid 1000",
// "timed out", "the requester went away", ...).
std::string resolution_text(const v1::ApprovalEvent::Resolved& resolved);
// An RPC failure in plain words ("cannot reach codexd: ...", "already answered: ...").
std::string rpc_error_text(const grpc::Status& status);

// Whether `r` (remember) means something for this request: an allow rule is proposed.
bool can_remember(const v1::ApprovalRequest& request);

// The command a request asks about, quoted on one line; for a network request, the host and
// the command that asked.
std::string request_command_line(const v1::ApprovalRequest& request);

// One row of the list: id, agent, time waited, command; exactly `width` columns.
std::string approval_row(const v1::ApprovalRequest& request, int64_t now_ms, size_t width);

// The detail pane: one labelled entry per fact (the text may need wrapping).
struct DetailEntry {
  std::string label;
  std::string text;
};
// `user_name` is the requester's login name, "" when unknown.
std::vector<DetailEntry> approval_details(const v1::ApprovalRequest& request, int64_t now_ms,
                                          const std::string& user_name);

// The body of the desktop notification, "<agent>: <command>": at most 200 columns, with the
// markup characters that notification servers interpret (& < >) escaped.
std::string notification_body(const v1::ApprovalRequest& request);

}  // namespace codexd::client
