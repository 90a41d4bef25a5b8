// The live approvals view without a terminal: the list follows the stream, keys answer the
// selected request (and only it), a denial carries its reason, and the screen holds what a
// reviewer needs at any size.
#include "client/approvals_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "client/approvals_format.h"
#include "client/approvals_screen.h"

namespace codexd::client {
namespace {

using ::testing::HasSubstr;

v1::ApprovalRequest request(const std::string& id, const std::string& word) {
  v1::ApprovalRequest r;
  r.set_approval_id(id);
  r.set_agent_id("agent-a");
  r.add_argv("mkdir");
  r.add_argv(word);
  r.set_workdir("/work");
  return r;
}

v1::ApprovalEvent::Resolved resolution(const std::string& id, v1::ReviewDecision decision, const std::string& source) {
  v1::ApprovalEvent::Resolved r;
  r.set_approval_id(id);
  r.set_decision(decision);
  r.set_resolution_source(source);
  return r;
}

Key text(const std::string& c) { return {KeyKind::kText, c}; }
Key key(KeyKind kind) { return {kind, ""}; }

// A view that has synced with `ids` pending.
ApprovalsState synced_with(const std::vector<std::string>& ids) {
  ApprovalsState state;
  state.stream_started();
  for (const auto& id : ids) EXPECT_FALSE(state.added(request(id, id))) << "the initial list is no news";
  state.synced();
  return state;
}

std::string screen_text(const ApprovalsState& state, size_t rows = 24, size_t cols = 100) {
  std::string out;
  for (const auto& line : render_screen(state, {}, rows, cols).lines) out += line.text + "\n";
  return out;
}

TEST(ApprovalsState, TheFirstRequestIsSelectedAndKeysAnswerIt) {
  auto state = synced_with({"apr_1", "apr_2"});
  ASSERT_NE(state.selected(), nullptr);
  EXPECT_EQ(state.selected()->approval_id(), "apr_1");
  auto answer = state.on_key(text("a"));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->approval_id, "apr_1");
  EXPECT_EQ(answer->decision, v1::APPROVED);
  state.on_key(key(KeyKind::kDown));
  EXPECT_EQ(state.on_key(text("s"))->decision, v1::APPROVED_FOR_SESSION);
  EXPECT_EQ(state.on_key(text("k")), std::nullopt);
  EXPECT_EQ(state.selected()->approval_id(), "apr_1");
}

TEST(ApprovalsState, NewRequestsAreNewsAndAnEmptyListSelectsTheArrival) {
  auto state = synced_with({});
  EXPECT_EQ(state.selected(), nullptr);
  EXPECT_TRUE(state.added(request("apr_1", "x")));
  EXPECT_EQ(state.selected()->approval_id(), "apr_1");
  EXPECT_FALSE(state.added(request("apr_1", "x"))) << "the same id twice is not news";
  EXPECT_TRUE(state.added(request("apr_2", "y")));
  EXPECT_EQ(state.selected()->approval_id(), "apr_1") << "an arrival never moves the selection";
}

TEST(ApprovalsState, WhenTheSelectedRequestGoesNothingIsSelected) {
  auto state = synced_with({"apr_1", "apr_2"});
  state.resolved(resolution("apr_1", v1::DENIED, "reviewer"));
  EXPECT_EQ(state.selected(), nullptr);
  EXPECT_THAT(state.status(), HasSubstr("apr_1 was denied"));
  EXPECT_EQ(state.on_key(text("a")), std::nullopt) << "a key meant for apr_1 must not answer apr_2";
  EXPECT_THAT(state.status(), HasSubstr("nothing selected"));
  state.on_key(text("j"));
  EXPECT_EQ(state.selected()->approval_id(), "apr_2");
}

TEST(ApprovalsState, DenyAsksForAReasonThatEnterSendsAndEscapeDrops) {
  auto state = synced_with({"apr_1"});
  EXPECT_EQ(state.on_key(text("d")), std::nullopt);
  ASSERT_TRUE(state.reason_prompt());
  for (const char* c : {"u", "s", "e", " ", "m", "a", "k", "x"}) state.on_key(text(c));
  state.on_key(key(KeyKind::kBackspace));
  state.on_key(text("e"));
  EXPECT_EQ(state.on_key(text("q")), std::nullopt) << "q is text in the reason";
  EXPECT_FALSE(state.quit());
  state.on_key(key(KeyKind::kBackspace));
  auto answer = state.on_key(key(KeyKind::kEnter));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->decision, v1::DENIED);
  EXPECT_EQ(answer->rationale, "use make");
  state.answer_sent(*answer, std::nullopt);
  EXPECT_EQ(state.status(), "apr_1: denied (reason: use make)");

  state.on_key(text("x"));
  ASSERT_TRUE(state.reason_prompt());
  EXPECT_EQ(state.reason_prompt()->decision, v1::ABORT);
  state.on_key(key(KeyKind::kEscape));
  EXPECT_FALSE(state.reason_prompt());
  EXPECT_THAT(state.status(), HasSubstr("nothing was sent"));
}

TEST(ApprovalsState, ARequestAnsweredElsewhereClosesItsReasonPrompt) {
  auto state = synced_with({"apr_1"});
  state.on_key(text("d"));
  state.on_key(text("n"));
  state.resolved(resolution("apr_1", v1::ABORT, "requester_disconnected"));
  EXPECT_FALSE(state.reason_prompt());
  EXPECT_THAT(state.status(), HasSubstr("your reason was not sent"));
}

TEST(ApprovalsState, RememberNeedsAProposedRule) {
  auto state = synced_with({"apr_1"});
  EXPECT_EQ(state.on_key(text("r")), std::nullopt);
  EXPECT_THAT(state.status(), HasSubstr("proposes no rule to remember"));
  auto with_rule = request("apr_2", "out");
  with_rule.add_proposed_amendment("mkdir");
  state.added(with_rule);
  state.on_key(text("j"));
  EXPECT_EQ(state.on_key(text("r"))->decision, v1::APPROVED_EXECPOLICY_AMENDMENT);
}

TEST(ApprovalsState, DisconnectedRefusesAnswersAndAResyncKeepsTheSelection) {
  auto state = synced_with({"apr_1", "apr_2"});
  state.on_key(text("j"));
  state.disconnected("retrying in 1s: cannot reach codexd: gone");
  EXPECT_EQ(state.on_key(text("a")), std::nullopt);
  EXPECT_THAT(state.status(), HasSubstr("not connected"));
  EXPECT_THAT(screen_text(state), HasSubstr("DISCONNECTED, retrying in 1s: cannot reach codexd: gone"));
  state.stream_started();
  EXPECT_FALSE(state.added(request("apr_2", "apr_2")));
  EXPECT_TRUE(state.added(request("apr_3", "z"))) << "arrived while disconnected";
  state.synced();
  EXPECT_EQ(state.pending().size(), 2u);
  EXPECT_EQ(state.selected()->approval_id(), "apr_2");
  EXPECT_EQ(state.on_key(text("a"))->approval_id, "apr_2");
}

TEST(ApprovalsState, QuitOnQOrCtrlC) {
  auto state = synced_with({});
  state.on_key(text("q"));
  EXPECT_TRUE(state.quit());
  auto other = synced_with({"apr_1"});
  other.on_key(text("d"));
  other.on_key(key(KeyKind::kInterrupt));
  EXPECT_TRUE(other.quit()) << "Ctrl-C quits from the reason prompt too";
}

TEST(ApprovalsScreen, TheSelectedRowIsMarkedAndItsDetailsShown) {
  auto state = synced_with({"apr_1", "apr_2"});
  state.on_key(text("j"));
  const Screen screen = render_screen(state, {}, 24, 100);
  ASSERT_EQ(screen.lines.size(), 24u);
  for (const auto& line : screen.lines) EXPECT_LE(display_width(line.text), 100u) << line.text;
  EXPECT_THAT(screen.lines[0].text, HasSubstr("2 pending"));
  EXPECT_EQ(screen.lines[3].style, LineStyle::kSelected);
  EXPECT_THAT(screen.lines[3].text, HasSubstr("> apr_2"));
  EXPECT_THAT(screen.lines[2].text, HasSubstr("  apr_1"));
  const std::string text_shown = screen_text(state);
  EXPECT_THAT(text_shown, HasSubstr("details of apr_2"));
  EXPECT_THAT(text_shown, HasSubstr("command    mkdir apr_2"));
  EXPECT_FALSE(screen.cursor_column);
}

TEST(ApprovalsScreen, TheReasonIsTypedOnTheBottomLineWithTheCursorAfterIt) {
  auto state = synced_with({"apr_1"});
  state.on_key(text("d"));
  state.on_key(text("n"));
  state.on_key(text("o"));
  const Screen screen = render_screen(state, {}, 24, 100);
  EXPECT_EQ(screen.lines.back().text, "deny apr_1, reason (Enter sends, Esc cancels): no");
  ASSERT_TRUE(screen.cursor_column);
  EXPECT_EQ(*screen.cursor_column, display_width(screen.lines.back().text));
}

TEST(ApprovalsScreen, ManyRequestsScrollToKeepTheSelectionInView) {
  std::vector<std::string> ids;
  for (int i = 0; i < 30; ++i) ids.push_back("apr_" + std::to_string(100 + i));
  auto state = synced_with(ids);
  for (int i = 0; i < 20; ++i) state.on_key(text("j"));
  const std::string shown = screen_text(state);
  EXPECT_THAT(shown, HasSubstr("> apr_120"));
  EXPECT_THAT(shown, HasSubstr("of 30"));
  EXPECT_THAT(screen_text(state, 5, 30), HasSubstr("too small"));
  EXPECT_EQ(render_screen(state, {}, 5, 30).lines.size(), 5u);
}

}  // namespace
}  // namespace codexd::client
