// ExecEngine + Session + ProcessStore against real processes.
#include "daemon/exec/exec_engine.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/exec/io_test_util.h"
#include "tests/exec/launch_test_util.h"

namespace codexd::exec {
namespace {

using namespace std::chrono_literals;
using testing::HasSubstr;
using testing_util::run_until;

class SessionTest : public ::testing::Test {
 protected:
  LaunchSpec shell(const std::string& script, bool tty = false) { return testing_util::shell_launch(script, tty); }
  SessionMetadata meta() {
    SessionMetadata m;
    m.owner_uid = 1000;
    return m;
  }
  Result<UnifiedOutcome> exec(const LaunchSpec& l, uint32_t yield_ms) {
    std::optional<Result<UnifiedOutcome>> got;
    engine.exec(meta(), l, Clock::now(), yield_ms, 10000, [&](Result<UnifiedOutcome> r) { got = std::move(r); });
    EXPECT_TRUE(run_until(io, [&] { return got.has_value(); }));
    return std::move(*got);
  }
  Result<UnifiedOutcome> write(int id, std::string chars, std::optional<uint32_t> yield = std::nullopt) {
    std::optional<Result<UnifiedOutcome>> got;
    engine.write_stdin(owner, id, std::move(chars), yield, 10000, [&](Result<UnifiedOutcome> r) { got = std::move(r); });
    EXPECT_TRUE(run_until(io, [&] { return got.has_value(); }));
    return std::move(*got);
  }
  Result<UnifiedOutcome> poll(int id, uint32_t yield) {
    std::optional<Result<UnifiedOutcome>> got;
    engine.poll(owner, id, yield, 10000, [&](Result<UnifiedOutcome> r) { got = std::move(r); });
    EXPECT_TRUE(run_until(io, [&] { return got.has_value(); }));
    return std::move(*got);
  }
  Result<UnifiedOutcome> reread(int id, uint64_t from, uint32_t tokens, uint32_t yield) {
    std::optional<Result<UnifiedOutcome>> got;
    engine.poll(owner, id, yield, tokens, [&](Result<UnifiedOutcome> r) { got = std::move(r); }, from);
    EXPECT_TRUE(run_until(io, [&] { return got.has_value(); }));
    return std::move(*got);
  }
  // Polls until the accumulated output contains `needle` (or the session ends).
  std::string poll_until(int id, const std::string& needle, std::string seen = {}) {
    for (int i = 0; i < 100 && seen.find(needle) == std::string::npos; ++i) {
      auto r = poll(id, 5000);
      if (!r.ok()) break;
      seen += r->output;
      if (r->exit_code) break;
    }
    return seen;
  }

  boost::asio::io_context io;
  ExecEngine engine{io, StoreLimits{}, EngineOptions{}};
  Requester owner{1000, false};
};

TEST_F(SessionTest, QuickExitIsReportedInlineWithoutSessionId) {
  auto r = exec(shell("echo hello; exit 3"), 10000);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_FALSE(r->session_id.has_value());
  EXPECT_EQ(r->output, "hello\n");
  EXPECT_EQ(r->original_token_count, 2u);
  EXPECT_LT(r->wall_time_seconds, 5.0);  // returned at the exit, not after the yield
  EXPECT_THAT(r->text, testing::MatchesRegex("Chunk ID: [0-9a-f]{6}\nWall time: [0-9]+\\.[0-9]{4} seconds\n"
                                             "Process exited with code 3\nOriginal token count: 2\nOutput:\nhello\n"));
  EXPECT_EQ(engine.live_sessions(), 0u);
}

TEST_F(SessionTest, LongRunningSessionThenPollThenExitReportedOnce) {
  auto r = exec(shell("echo started; read line < /dev/null; sleep 0.5; echo done; exit 7"), 250);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->session_id.has_value());
  EXPECT_FALSE(r->exit_code.has_value());
  int id = *r->session_id;
  EXPECT_GE(id, 1000);
  EXPECT_LT(id, 100000);
  EXPECT_THAT(r->text, HasSubstr("Process running with session ID " + std::to_string(id)));
  // Poll returns at the first output or at the exit, whichever comes first.
  std::string seen = r->output;
  std::optional<int> exit_code;
  for (int i = 0; i < 20 && !exit_code; ++i) {
    auto p = poll(id, 30000);
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    seen += p->output;
    exit_code = p->exit_code;
  }
  EXPECT_EQ(exit_code, 7);
  EXPECT_THAT(seen, HasSubstr("started\n"));
  EXPECT_THAT(seen, HasSubstr("done\n"));
  auto again = poll(id, 0);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(again.status().message(), "Unknown process id " + std::to_string(id));
}

TEST_F(SessionTest, TtyCatEchoesWhatWasWritten) {
  auto r = exec(shell("exec cat", true), 250);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->session_id);
  int id = *r->session_id;
  auto w = write(id, "ping-123\n", 1000);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  std::string seen = poll_until(id, "ping-123\r\nping-123", w->output);
  // The PTY echoes the input, then cat writes it back.
  EXPECT_THAT(seen, HasSubstr("ping-123\r\nping-123"));
  auto ctrl_d = write(id, "\x04", 2000);
  ASSERT_TRUE(ctrl_d.ok());
  if (!ctrl_d->exit_code) poll_until(id, "never-appears");
  EXPECT_EQ(engine.live_sessions(), 0u);
}

TEST_F(SessionTest, NonTtyStdinIsClosedExceptCtrlC) {
  auto r = exec(shell("trap 'echo got-int; exit 42' INT; echo ready; while :; do sleep 0.05; done"), 250);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->session_id);
  int id = *r->session_id;
  std::string seen = poll_until(id, "ready", r->output);
  ASSERT_THAT(seen, HasSubstr("ready"));
  auto w = write(id, "hello\n");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w.status().message(), "stdin is closed for this session; rerun exec_command with tty=true to keep stdin open");
  auto c = write(id, "\x03", 5000);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  std::string out = c->exit_code ? c->output : poll_until(id, "got-int", c->output);
  EXPECT_THAT(out, HasSubstr("got-int"));
}

TEST_F(SessionTest, CancelKillsTheWholeProcessTreeIncludingAGrandchild) {
  // The grandchild announces its pid; the session's main process waits for its child.
  auto r = exec(shell("sh -c 'sleep 300 & echo gc=$! end; wait' & wait"), 250);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->session_id);
  int id = *r->session_id;
  std::string seen = poll_until(id, " end", r->output);
  auto at = seen.find("gc=");
  ASSERT_NE(at, std::string::npos) << seen;
  pid_t grandchild = std::stoi(seen.substr(at + 3));
  ASSERT_GT(grandchild, 0);
  ASSERT_EQ(::kill(grandchild, 0), 0);
  auto cancelled = engine.cancel(owner, id, ExecEngine::CancelMode::kTerminate, 2000ms);
  ASSERT_TRUE(cancelled.ok());
  EXPECT_TRUE(*cancelled);
  std::optional<int> code;
  for (int i = 0; i < 20 && !code; ++i) {
    auto p = poll(id, 5000);
    ASSERT_TRUE(p.ok());
    code = p->exit_code;
  }
  EXPECT_EQ(code, 128 + SIGTERM);
  // The grandchild got the group's signal too: gone, or a zombie waiting for init.
  ASSERT_TRUE(run_until(io, [&] {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string content((std::istreambuf_iterator<char>(stat)), {});
    return !stat.good() || content.find(") Z ") != std::string::npos;
  }));
}

TEST_F(SessionTest, AnotherUidIsRefusedAsIfTheSessionDidNotExist) {
  auto r = exec(shell("sleep 30"), 250);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->session_id);
  Requester stranger{2000, false};
  std::optional<Result<UnifiedOutcome>> got;
  engine.poll(stranger, *r->session_id, 0, 100, [&](Result<UnifiedOutcome> res) { got = std::move(res); });
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status().code(), StatusCode::kNotFound);
  EXPECT_EQ(got->status().message(), "Unknown process id " + std::to_string(*r->session_id));
  EXPECT_EQ(engine.cancel(stranger, *r->session_id, ExecEngine::CancelMode::kKill, 0ms).status().code(),
            StatusCode::kNotFound);
  engine.kill_all();
}

TEST_F(SessionTest, OriginalTokenCountCountsEveryByteNotOnlyWhatTheBufferKept) {
  // 3 MB of output in one call: the 1 MiB head+tail buffer keeps 1 MiB, Codex's count is of
  // the whole output, ceil(3000000 / 4).
  auto r = exec(shell("head -c 3000000 /dev/zero | tr '\\0' a"), 30000);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->original_token_count, 750000u);
}

TEST_F(SessionTest, OutputOverTheBudgetIsTruncatedInCodexFormat) {
  std::optional<Result<UnifiedOutcome>> got;
  engine.exec(meta(), shell("seq 1 20000"), Clock::now(), 10000, 100, [&](Result<UnifiedOutcome> r) { got = std::move(r); });
  ASSERT_TRUE(run_until(io, [&] { return got.has_value(); }));
  ASSERT_TRUE(got->ok());
  const auto& r = **got;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.output, testing::StartsWith("Total output lines: 20000\n\n1\n2\n"));
  EXPECT_THAT(r.output, HasSubstr("tokens truncated"));
  EXPECT_THAT(r.output, testing::EndsWith("19999\n20000\n"));
  EXPECT_EQ(r.original_token_count, (108894u + 3) / 4);  // `seq 1 20000 | wc -c` = 108894
}

TEST_F(SessionTest, SixtyFivethSessionPrunesTheOldestAndKillsIt) {
  // Start 64 sessions, one after the other so that their last_used order is known.
  // Their answers arrive after the yield, possibly after this test body: owned by the callbacks.
  std::vector<int> ids;
  auto answers = std::make_shared<std::vector<std::optional<Result<UnifiedOutcome>>>>(64);
  for (int i = 0; i < 64; ++i) {
    auto ticket = engine.exec(meta(), shell("sleep 300"), Clock::now(), 250, 100,
                              [answers, i](Result<UnifiedOutcome> r) { (*answers)[i] = std::move(r); });
    ASSERT_TRUE(ticket.has_value());
    ids.push_back(ticket->session_id);
  }
  ASSERT_TRUE(run_until(io, [&] { return engine.live_sessions() == 64; }));
  pid_t oldest_pid = 0;
  for (const auto& s : engine.list(owner, false)) {
    if (s->id() == ids.front()) oldest_pid = s->pid();
  }
  ASSERT_GT(oldest_pid, 0);
  auto r = exec(shell("sleep 300"), 250);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(engine.live_sessions(), 64u);
  EXPECT_EQ(engine.find(owner, ids.front()).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(engine.find(owner, ids[1]).ok());
  EXPECT_FALSE(r->warnings.empty());
  EXPECT_THAT(r->warnings.front(), HasSubstr("you currently have 64 processes open"));
  // The pruned session's process was killed (and is reaped, not left a zombie of ours).
  ASSERT_TRUE(run_until(io, [&] { return ::kill(oldest_pid, 0) != 0; }));
  engine.kill_all();
}

TEST_F(SessionTest, AttachWatcherSeesEverythingWithoutStealingThePollBuffer) {
  auto r = exec(shell("echo one; read x < /dev/null; sleep 0.3; echo two"), 250);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->session_id);
  auto session = engine.find(owner, *r->session_id);
  ASSERT_TRUE(session.ok());
  auto watcher = (*session)->add_watcher(0, true);
  std::string watched;
  bool exited = false;
  ASSERT_TRUE(run_until(io, [&] {
    for (;;) {
      auto step = (*session)->next_for_watcher(watcher, 1 << 20);
      if (step.kind == WatchStep::Kind::kData) watched += step.data;
      if (step.kind == WatchStep::Kind::kExit) exited = true;
      if (step.kind != WatchStep::Kind::kData) break;
    }
    return exited;
  }));
  EXPECT_EQ(watched, "one\ntwo\n");
  // The poll path still gets the rest (and the exit report).
  std::string polled = poll_until(*r->session_id, "two", r->output);
  EXPECT_EQ(polled, "one\ntwo\n");
}

// Poll.from_offset: the same bytes again for an offset already delivered, contiguous within
// the budget, delivery moved forward (a plain poll neither repeats nor skips), the wait for
// bytes at the offset, OUT_OF_RANGE past the end, and the final result re-readable after it
// was reported.
TEST_F(SessionTest, RereadFromAnOffsetReturnsTheSameBytesAndPlainPollContinuesAfterThem) {
  // The second burst comes only when the test says so (a line on the terminal), not by timing.
  auto r = exec(shell("stty -echo; printf 0123456789; read x; printf abcdefghij; exec sleep 30", true), 250);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_TRUE(r->session_id);
  const int id = *r->session_id;
  EXPECT_EQ(poll_until(id, "0123456789", r->output), "0123456789");

  auto a = reread(id, 3, 1, 0);  // 1 token: 4 bytes
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(a->output, "3456");
  EXPECT_EQ(a->output_offset, 7u);
  EXPECT_EQ(a->lost_bytes, 0u);
  EXPECT_FALSE(a->exit_code);
  EXPECT_EQ(a->session_id, id);
  auto b = reread(id, 0, 1, 0);  // already delivered: the same bytes again
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->output, "0123");
  EXPECT_EQ(b->output_offset, 4u);
  auto plain = poll(id, 0);  // everything was delivered before the re-reads: nothing again
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->output, "");
  EXPECT_EQ(plain->output_offset, 10u);

  ASSERT_TRUE(engine.send_input(owner, id, "go\n").ok());
  auto c = reread(id, 10, 1, 5000);  // waits for bytes at 10
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->output, "abcd");
  EXPECT_EQ(c->output_offset, 14u);
  plain = poll(id, 5000);  // continues after what the re-read delivered
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->output, "efghij");
  EXPECT_EQ(plain->output_offset, 20u);

  auto past = reread(id, 21, 1, 0);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().code(), StatusCode::kOutOfRange);
  EXPECT_THAT(past.status().message(), HasSubstr("offset 20"));

  ASSERT_TRUE(engine.cancel(owner, id, ExecEngine::CancelMode::kKill, 0ms).ok());
  std::optional<int> exit_code;
  for (int i = 0; i < 100 && !exit_code; ++i) {
    auto f = reread(id, 20, 1000, 5000);
    ASSERT_TRUE(f.ok()) << f.status().to_string();
    EXPECT_EQ(f->output, "");
    exit_code = f->exit_code;
  }
  ASSERT_TRUE(exit_code);
  // The final result was reported (and, say, lost): plain calls no longer know the session...
  auto gone = poll(id, 0);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  // ...a re-read still gets the tail and the exit; one that stops short does not get the exit.
  auto again = reread(id, 16, 1, 0);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(again->output, "ghij");
  EXPECT_EQ(again->exit_code, exit_code);
  auto shorter = reread(id, 12, 1, 0);
  ASSERT_TRUE(shorter.ok());
  EXPECT_EQ(shorter->output, "cdef");
  EXPECT_FALSE(shorter->exit_code);
  EXPECT_EQ(shorter->session_id, id);
}

}  // namespace
}  // namespace codexd::exec
