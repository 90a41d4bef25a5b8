// peek_exit / reap_child / reap_if_exited against real children behind pidfds.
#include <poll.h>
#include <signal.h>

#include <gtest/gtest.h>

#include "daemon/exec/exit_status.h"
#include "platform/posix/spawn.h"
#include "tests/exec/launch_test_util.h"

namespace codexd::exec {
namespace {

posix::SpawnedProcess spawn_shell(const std::string& script) {
  posix::SpawnRequest r = testing_util::shell_spawn_request(script);
  r.stdin_pipe = true;
  auto p = posix::spawn_process(r);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  return std::move(p).value();
}

void wait_readable(int pidfd) {
  pollfd ready{pidfd, POLLIN, 0};
  ASSERT_EQ(::poll(&ready, 1, 10000), 1);
}

TEST(PeekExit, RunningThenExitedWithoutReapingThenReaped) {
  auto p = spawn_shell("read line; exit 7");
  int pidfd = p.pidfd.get();
  EXPECT_EQ(peek_exit(pidfd).state, ExitPeek::State::kRunning);

  p.input.reset();  // EOF on stdin: `read` returns and the shell exits 7
  wait_readable(pidfd);
  ExitPeek peek = peek_exit(pidfd);
  ASSERT_EQ(peek.state, ExitPeek::State::kExited);
  EXPECT_EQ(peek.status.exit_code, 7);
  EXPECT_FALSE(peek.status.signal.has_value());
  // WNOWAIT: still a zombie, so a second look sees the same exit.
  EXPECT_EQ(peek_exit(pidfd).state, ExitPeek::State::kExited);

  reap_child(pidfd);
  ExitPeek after = peek_exit(pidfd);
  EXPECT_EQ(after.state, ExitPeek::State::kAlreadyReaped);
  EXPECT_EQ(after.error, ECHILD);
}

TEST(PeekExit, KilledBySignal) {
  auto p = spawn_shell("sleep 30");
  ASSERT_EQ(::kill(p.pid, SIGKILL), 0);
  wait_readable(p.pidfd.get());
  ExitPeek peek = peek_exit(p.pidfd.get());
  ASSERT_EQ(peek.state, ExitPeek::State::kExited);
  EXPECT_EQ(peek.status.exit_code, 128 + SIGKILL);
  EXPECT_EQ(peek.status.signal, SIGKILL);
  reap_if_exited(p.pidfd.get());
  EXPECT_EQ(peek_exit(p.pidfd.get()).state, ExitPeek::State::kAlreadyReaped);
}

TEST(ReapIfExited, LeavesARunningChildAlone) {
  auto p = spawn_shell("sleep 30");
  reap_if_exited(p.pidfd.get());
  EXPECT_EQ(peek_exit(p.pidfd.get()).state, ExitPeek::State::kRunning);
  ASSERT_EQ(::kill(p.pid, SIGKILL), 0);
  reap_child(p.pidfd.get());  // blocks until it is gone
  EXPECT_EQ(peek_exit(p.pidfd.get()).state, ExitPeek::State::kAlreadyReaped);
}

}  // namespace
}  // namespace codexd::exec
