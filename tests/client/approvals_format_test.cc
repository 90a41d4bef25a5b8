// What the live approvals view shows of a request: every word an agent chose must be visible
// and unambiguous on one terminal line (checked by pasting it into bash), and every field the
// reviewer needs is in the row and the detail pane.
#include "client/approvals_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/utf8.h"
#include "tests/support/shell_read_back.h"

namespace codexd::client {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kNow = 1'700'000'100'000;

// One line, nothing a terminal acts on: valid UTF-8, no control byte at all, no DEL.
void expect_one_safe_line(const std::string& text) {
  EXPECT_TRUE(is_valid_utf8(text)) << text;
  for (unsigned char c : text) EXPECT_TRUE(c >= 0x20 && c != 0x7F) << "raw byte " << int(c) << " in: " << text;
  for (std::string_view bad : {"\u202E", "\u200B", "\xC2\x9B"}) EXPECT_EQ(text.find(bad), std::string::npos) << text;
}

v1::ApprovalRequest mkdir_request() {
  v1::ApprovalRequest r;
  r.set_approval_id("apr_0123456789abcdef");
  r.set_requester_uid(1000);
  r.set_agent_id("agent-a");
  for (const char* word : {"mkdir", "a b", "x\ny", "it's"}) r.add_argv(word);
  r.set_workdir("/work/repo");
  r.mutable_reason()->set_kind(v1::ApprovalReason::PROMPT_RULE);
  r.mutable_reason()->set_justification("creates directories");
  auto* rule = r.add_matched_rules();
  rule->add_matched_prefix("mkdir");
  rule->set_decision(v1::PROMPT);
  rule->set_source("/etc/codexd/rules/dev.rules:12");
  rule->set_justification("creates directories");
  r.mutable_sandbox()->set_backend(v1::SANDBOX_LINUX_BWRAP);
  r.mutable_sandbox()->set_mode("workspace-write");
  r.mutable_sandbox()->set_network_mode("off");
  r.set_created_at_unix_ms(kNow - 65'000);
  r.set_call_id("call-7");
  r.set_attempt(1);
  return r;
}

std::string detail(const std::vector<DetailEntry>& entries, const std::string& label) {
  std::string out;
  for (const auto& e : entries) {
    if (e.label == label) out += (out.empty() ? "" : "\n") + e.text;
  }
  return out;
}

TEST(ApprovalsFormat, AWordWithANewlineStaysOnOneLineAndReadsBackInBash) {
  EXPECT_EQ(quote_word_on_one_line("x\ny"), "'x'$'\\n''y'");
  EXPECT_EQ(quote_word_on_one_line("plain"), "plain");
  const std::vector<std::vector<std::string>> cases = {
      {"mkdir", "a b", "x\ny", "it's"},
      {"printf", "\n", "trailing\n", "\nleading", "two\n\nlines"},
      {"echo", "\x1B[2Jclear", "bell\a", "tab\there", "del\x7F", "bad\xFFutf8"},
      {"echo", "evil\u202Etxt", "zero\u200Bwidth", "say \"hi\"", "$(id)", "", "'\n'"},
  };
  for (const auto& argv : cases) {
    const std::string line = quote_command_on_one_line(argv);
    expect_one_safe_line(line);
    EXPECT_EQ(codexd::testing::words_read_back_by("/bin/bash", line), argv) << line;
  }
}

TEST(ApprovalsFormat, VisibleTextEscapesWhatATerminalWouldActOn) {
  EXPECT_EQ(visible_text("creates directories"), "creates directories");
  EXPECT_EQ(visible_text("a\nb\tc\rd\x1B[31m"), "a\\nb\\tc\\rd\\e[31m");
  EXPECT_EQ(visible_text("bad\xFF"), "bad\\xFF");
  EXPECT_EQ(visible_text("rtl\u202Eoverride"), "rtl\\u{202E}override");
  EXPECT_EQ(visible_text("back\\nslash"), "back\\\\nslash") << "a real backslash cannot pass for an escape";
  EXPECT_EQ(visible_text("日本語 é"), "日本語 é");
  expect_one_safe_line(visible_text("\x01\x7F\xC2\x9B\u200B"));
}

TEST(ApprovalsFormat, WidthsFitAndWrapByColumns) {
  EXPECT_EQ(display_width("abc"), 3u);
  EXPECT_EQ(display_width("日本"), 4u);
  EXPECT_EQ(display_width("e\u0301"), 1u);
  EXPECT_EQ(fit_to_width("abcdef", 4), "abc…");
  EXPECT_EQ(fit_to_width("abc", 4), "abc");
  EXPECT_EQ(fit_to_width("日本語", 4), "日…");
  EXPECT_EQ(pad_to_width("ab", 4), "ab  ");
  EXPECT_EQ(wrap_to_width("aaaa bbbb cccc", 10), (std::vector<std::string>{"aaaa bbbb ", "cccc"}));
  EXPECT_EQ(wrap_to_width("abcdefghij", 4), (std::vector<std::string>{"abcd", "efgh", "ij"}));
  EXPECT_EQ(wrap_to_width("", 4), (std::vector<std::string>{""}));
}

TEST(ApprovalsFormat, DurationsReadAsAPersonWould) {
  EXPECT_EQ(format_duration(-5), "0s");
  EXPECT_EQ(format_duration(7'999), "7s");
  EXPECT_EQ(format_duration(245'000), "4m05s");
  EXPECT_EQ(format_duration(7'980'000), "2h13m");
  EXPECT_EQ(format_duration(273'600'000), "3d04h");
}

TEST(ApprovalsFormat, ARowHasIdAgentWaitAndTheQuotedCommandInItsWidth) {
  const std::string row = approval_row(mkdir_request(), kNow, 100);
  EXPECT_EQ(display_width(row), 100u);
  expect_one_safe_line(row);
  EXPECT_THAT(row, AllOf(HasSubstr("apr_0123456789abcdef"), HasSubstr("agent-a"), HasSubstr("1m05s"),
                         HasSubstr("mkdir 'a b' 'x'$'\\n''y' 'it'\\''s'")));
  const std::string narrow = approval_row(mkdir_request(), kNow, 50);
  EXPECT_EQ(display_width(narrow), 50u);
  EXPECT_THAT(narrow, HasSubstr("…"));
}

TEST(ApprovalsFormat, DetailsNameEverythingAReviewerDecidesOn) {
  auto r = mkdir_request();
  r.set_expires_at_unix_ms(kNow + 120'000);
  const auto details = approval_details(r, kNow, "alice");
  for (const auto& e : details) expect_one_safe_line(e.label + e.text);
  EXPECT_EQ(detail(details, "approval"), "apr_0123456789abcdef");
  EXPECT_EQ(detail(details, "agent"), "agent-a, uid 1000 (alice)");
  EXPECT_THAT(detail(details, "session"), HasSubstr("call call-7"));
  EXPECT_EQ(detail(details, "cwd"), "/work/repo");
  EXPECT_EQ(detail(details, "command"), "mkdir 'a b' 'x'$'\\n''y' 'it'\\''s'");
  EXPECT_EQ(detail(details, "why"), "a prompt rule matched");
  EXPECT_EQ(detail(details, "rule"), "PROMPT by rule mkdir at /etc/codexd/rules/dev.rules:12: creates directories");
  EXPECT_EQ(detail(details, "sandbox"), "LINUX_BWRAP, workspace-write, network off");
  EXPECT_EQ(detail(details, "escalation"), "not requested");
  EXPECT_EQ(detail(details, "remember"), "nothing to remember (no rule proposed)");
  EXPECT_EQ(detail(details, "waited"), "1m05s (times out in 2m00s)");
  EXPECT_EQ(detail(details, "nested"), "");
}

TEST(ApprovalsFormat, HeuristicsEscalationsNestedExecsAndAmendmentsAreSaid) {
  auto r = mkdir_request();
  r.clear_matched_rules();
  auto* heuristic = r.add_matched_rules();
  heuristic->set_decision(v1::PROMPT);
  heuristic->set_heuristic(true);
  r.mutable_reason()->set_kind(v1::ApprovalReason::ESCALATION);
  r.mutable_reason()->set_justification("needs\x1B[2J the network");
  r.mutable_sandbox()->set_backend(v1::SANDBOX_NONE);
  r.add_proposed_amendment("mkdir");
  r.mutable_nested()->set_session_id(42);
  r.mutable_nested()->set_pid(1234);
  r.mutable_nested()->set_path("/usr/bin/mk dir");
  r.mutable_nested()->set_parent_command("make deploy");
  const auto details = approval_details(r, kNow, "");
  EXPECT_EQ(detail(details, "agent"), "agent-a, uid 1000");
  EXPECT_EQ(detail(details, "rule"), "PROMPT by heuristic (no rule matched)");
  EXPECT_EQ(detail(details, "note"), "needs\\e[2J the network");
  EXPECT_EQ(detail(details, "sandbox"), "NONE: runs WITHOUT the sandbox");
  EXPECT_THAT(detail(details, "escalation"), HasSubstr("REQUESTED"));
  EXPECT_EQ(detail(details, "remember"), "prefix_rule(mkdir) -> allow");
  EXPECT_THAT(detail(details, "session"), HasSubstr("42"));
  EXPECT_EQ(detail(details, "nested"),
            "pid 1234 execs '/usr/bin/mk dir' inside session 42, started as make deploy (its sandbox stays as it is)");
  EXPECT_TRUE(can_remember(r));
  EXPECT_FALSE(can_remember(mkdir_request()));
}

TEST(ApprovalsFormat, ANetworkRequestShowsItsHost) {
  v1::ApprovalRequest r = mkdir_request();
  r.clear_argv();
  r.set_cmd("curl https://example.com");
  r.mutable_reason()->set_kind(v1::ApprovalReason::NETWORK);
  r.mutable_network()->set_host("example.com");
  r.mutable_network()->set_port(443);
  r.mutable_network()->set_protocol("https");
  EXPECT_EQ(request_command_line(r), "connect to example.com:443 (https) from curl https://example.com");
  EXPECT_TRUE(can_remember(r));
  EXPECT_EQ(detail(approval_details(r, kNow, ""), "remember"), "network_rule(host=example.com, protocol=https) -> allow");
}

TEST(ApprovalsFormat, TheNotificationBodyIsShortAndCarriesNoMarkup) {
  auto r = mkdir_request();
  r.set_agent_id("<b>agent</b>");
  r.add_argv("<a href='x'>&");
  const std::string body = notification_body(r);
  EXPECT_THAT(body, AllOf(HasSubstr("&lt;b&gt;agent&lt;/b&gt;: mkdir"), HasSubstr("&lt;a href="), HasSubstr("&amp;")));
  EXPECT_THAT(body, Not(HasSubstr("<")));
  auto long_one = mkdir_request();
  long_one.add_argv(std::string(500, 'x'));
  EXPECT_EQ(display_width(notification_body(long_one)), 200u);
}

TEST(ApprovalsFormat, OutcomesAndErrorsInPlainWords) {
  EXPECT_EQ(decision_text(v1::APPROVED), "approved once");
  EXPECT_EQ(decision_text(v1::APPROVED_FOR_SESSION), "approved for the session");
  EXPECT_EQ(decision_text(v1::DENIED), "denied");
  v1::ApprovalEvent::Resolved resolved;
  resolved.set_decision(v1::DENIED);
  resolved.set_resolved_by_uid(1000);
  resolved.set_resolution_source("reviewer");
  EXPECT_EQ(resolution_text(resolved), "denied by uid 1000");
  resolved.clear_resolved_by_uid();
  resolved.set_resolution_source("timeout");
  EXPECT_EQ(resolution_text(resolved), "timed out");
  resolved.set_resolution_source("requester_disconnected");
  EXPECT_EQ(resolution_text(resolved), "withdrawn: the requester went away");
  EXPECT_EQ(rpc_error_text(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "apr_x is already resolved")),
            "already answered: apr_x is already resolved");
  EXPECT_EQ(rpc_error_text(grpc::Status(grpc::StatusCode::UNAVAILABLE, "connect failed")), "cannot reach codexd: connect failed");
}

}  // namespace
}  // namespace codexd::client
