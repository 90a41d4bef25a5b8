// The 64-session cap over the API (Codex §1.4): the 65th session prunes an exited session
// first, else the least recently used one outside the 8 most recent; pruned sessions are killed
// and forgotten; results carry Codex's warning from 60 open sessions on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <set>

#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

std::string warning_for(size_t open) {
  return "The maximum number of unified exec processes you can keep open is 60 and you currently have " +
         std::to_string(open) + " processes open. Reuse older processes or close them to prevent automatic pruning of old processes";
}

// Starts `n` sessions concurrently (each ExecCommand waits its 250 ms yield; in parallel that
// costs one yield, not n).
std::vector<ExecCall> start_many(v1::Exec::Stub& stub, const v1::ExecCommandRequest& request, size_t n) {
  std::vector<ExecCall> calls(n);
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::mutex mutex;
  std::condition_variable cv;
  size_t done = 0;
  for (size_t i = 0; i < n; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    stub.async()->ExecCommand(contexts.back().get(), &request, &calls[i].result, [&, i](grpc::Status st) {
      std::lock_guard lock(mutex);
      calls[i].status = std::move(st);
      ++done;
      cv.notify_all();
    });
  }
  std::unique_lock lock(mutex);
  cv.wait(lock, [&] { return done == n; });
  return calls;
}

// Least recently used first (ListSessions answers most recently used first).
std::vector<v1::SessionInfo> sessions_by_age(v1::Exec::Stub& stub) {
  auto sessions = list_sessions(stub);
  std::reverse(sessions.begin(), sessions.end());
  return sessions;
}

struct AttachEnd {
  bool finished_ok = false;  // the stream's final status was OK
  bool exit_seen = false;    // an exit event came
};

// Attaches to a session and reads until the stream ends (for an exiting session: once the
// daemon has seen the exit).
AttachEnd attach_until_end(v1::Exec::Stub& stub, int session_id) {
  grpc::ClientContext context;
  v1::AttachRequest attach;
  attach.set_session_id(session_id);
  auto reader = stub.Attach(&context, attach);
  v1::OutputEvent event;
  AttachEnd end;
  while (reader->Read(&event)) end.exit_seen = end.exit_seen || event.has_exit();
  end.finished_ok = reader->Finish().ok();
  return end;
}

bool contains_session(const std::vector<v1::SessionInfo>& sessions, int id) {
  return std::any_of(sessions.begin(), sessions.end(), [id](const auto& s) { return s.session_id() == id; });
}

TEST(Pruning, The65thSessionPrunesAnExitedOneFirstThenTheLeastRecentlyUsed) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto stub = v1::Exec::NewStub(daemon.channel());
  Fifo go(daemon.workspace(), "go");

  // One session that will exit without being reported, started first (the oldest)...
  auto exiting = exec_command(*stub, argv_request(daemon, {"/bin/sh", "-c", "read a < go"}, 250));
  ASSERT_TRUE(exiting.status.ok() && exiting.result.has_session_id()) << describe(exiting.status);
  const int exited_id = exiting.result.session_id();
  // ...and 63 that keep running.
  auto sleeper = argv_request(daemon, {"sleep", "1000"}, 250);
  auto calls = start_many(*stub, sleeper, 63);
  std::set<int> ids = {exited_id};
  for (const auto& c : calls) {
    ASSERT_TRUE(c.status.ok()) << describe(c.status);
    ASSERT_TRUE(c.result.has_session_id());
    EXPECT_TRUE(HasCodexText(c.result));
    ids.insert(c.result.session_id());
  }
  ASSERT_EQ(ids.size(), 64u) << "session ids are unique";
  ASSERT_EQ(list_sessions(*stub).size(), 64u);

  // Make the first session exit; Attach ends with its exit event once the daemon has seen it.
  go.write("x\n");
  {
    AttachEnd end = attach_until_end(*stub, exited_id);
    ASSERT_TRUE(end.finished_ok);
    ASSERT_TRUE(end.exit_seen);
  }
  // Attach counted as a use of the exited session; use the 8 oldest running sessions after it,
  // so that it is outside the protected 8 but more recently used than the other 55.
  auto by_age = sessions_by_age(*stub);
  ASSERT_EQ(by_age.back().session_id(), exited_id);
  std::vector<int> touched;
  for (size_t i = 0; i < 8; ++i) {
    touched.push_back(by_age[i].session_id());
    ASSERT_TRUE(poll(*stub, touched.back(), 0).result.has_session_id());
  }
  const int lru_after_touch = by_age[8].session_id();
  const pid_t lru_pid = by_age[8].pid();

  // 65th: the exited session goes, although 55 running ones are less recently used.
  auto c65 = exec_command(*stub, sleeper);
  ASSERT_TRUE(c65.status.ok()) << describe(c65.status);
  ASSERT_TRUE(c65.result.has_session_id());
  EXPECT_THAT(c65.result.warnings(), ::testing::ElementsAre(warning_for(64)));
  EXPECT_TRUE(HasCodexText(c65.result));  // the warning is not part of Codex's text
  auto after65 = list_sessions(*stub);
  EXPECT_EQ(after65.size(), 64u);
  EXPECT_FALSE(contains_session(after65, exited_id));
  for (int id : touched) EXPECT_TRUE(contains_session(after65, id));
  EXPECT_TRUE(contains_session(after65, lru_after_touch));
  auto gone = poll(*stub, exited_id, 0);
  EXPECT_EQ(gone.status.error_code(), grpc::StatusCode::NOT_FOUND);
  // Its owner is told what happened to it, exit code included (not "Unknown process id").
  EXPECT_EQ(gone.status.error_message(), "process id " + std::to_string(exited_id) +
                                             " had exited with code 0 and was pruned to make room for newer "
                                             "sessions (exec.max_sessions); its output is gone");

  // 66th: nothing has exited, so the least recently used running session is pruned and killed.
  auto c66 = exec_command(*stub, sleeper);
  ASSERT_TRUE(c66.status.ok() && c66.result.has_session_id()) << describe(c66.status);
  EXPECT_THAT(c66.result.warnings(), ::testing::ElementsAre(warning_for(64)));
  auto after66 = list_sessions(*stub);
  EXPECT_EQ(after66.size(), 64u);
  EXPECT_FALSE(contains_session(after66, lru_after_touch));
  for (int id : touched) EXPECT_TRUE(contains_session(after66, id));
  EXPECT_TRUE(contains_session(after66, c65.result.session_id()));
  auto killed = poll(*stub, lru_after_touch, 0);
  EXPECT_EQ(killed.status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(killed.status.error_message(), ::testing::HasSubstr("was still running and was pruned"));
  EXPECT_TRUE(wait_process_exit(lru_pid)) << "the pruned session's process still runs";

  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

TEST(Pruning, TheEightMostRecentlyUsedAreNeverPrunedEvenWhenTheyHaveExited) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto stub = v1::Exec::NewStub(daemon.channel());
  Fifo go(daemon.workspace(), "go");
  auto sleeper = argv_request(daemon, {"sleep", "1000"}, 250);
  auto calls = start_many(*stub, sleeper, 63);
  for (const auto& c : calls) ASSERT_TRUE(c.status.ok() && c.result.has_session_id()) << describe(c.status);
  // The newest session exits, but it is among the 8 most recently used.
  auto exiting = exec_command(*stub, argv_request(daemon, {"/bin/sh", "-c", "read a < go"}, 250));
  ASSERT_TRUE(exiting.status.ok() && exiting.result.has_session_id()) << describe(exiting.status);
  EXPECT_THAT(exiting.result.warnings(), ::testing::ElementsAre(warning_for(64)));
  const int exited_id = exiting.result.session_id();
  go.write("x\n");
  ASSERT_TRUE(attach_until_end(*stub, exited_id).finished_ok);
  const int lru = sessions_by_age(*stub)[0].session_id();
  auto c65 = exec_command(*stub, sleeper);
  ASSERT_TRUE(c65.status.ok() && c65.result.has_session_id()) << describe(c65.status);
  auto after = list_sessions(*stub);
  EXPECT_EQ(after.size(), 64u);
  EXPECT_FALSE(contains_session(after, lru));
  EXPECT_TRUE(contains_session(after, exited_id));
  // Its exit is still reported, once.
  auto reported = poll(*stub, exited_id, 0);
  ASSERT_TRUE(reported.status.ok()) << describe(reported.status);
  EXPECT_EQ(reported.result.exit_code(), 0);
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

}  // namespace
}  // namespace codexd::testing
