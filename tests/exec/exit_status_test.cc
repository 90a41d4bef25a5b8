#include "daemon/exec/exit_status.h"

#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

namespace codexd::exec {
namespace {

siginfo_t child_info(int code, int status) {
  siginfo_t info{};
  info.si_signo = SIGCHLD;
  info.si_code = code;
  info.si_status = status;
  return info;
}

TEST(ExitStatusFromSiginfo, ExitedCarriesTheCodeAndNoSignal) {
  ExitStatus s = exit_status_from(child_info(CLD_EXITED, 3));
  EXPECT_EQ(s.exit_code, 3);
  EXPECT_FALSE(s.signal.has_value());
  EXPECT_FALSE(s.core_dumped);
  EXPECT_EQ(exit_status_from(child_info(CLD_EXITED, 0)).exit_code, 0);
  EXPECT_EQ(exit_status_from(child_info(CLD_EXITED, 255)).exit_code, 255);
}

TEST(ExitStatusFromSiginfo, KilledIs128PlusTheSignal) {
  ExitStatus s = exit_status_from(child_info(CLD_KILLED, SIGKILL));
  EXPECT_EQ(s.exit_code, 128 + SIGKILL);
  EXPECT_EQ(s.signal, SIGKILL);
  EXPECT_FALSE(s.core_dumped);
}

TEST(ExitStatusFromSiginfo, DumpedIsKilledWithACore) {
  ExitStatus s = exit_status_from(child_info(CLD_DUMPED, SIGSEGV));
  EXPECT_EQ(s.exit_code, 128 + SIGSEGV);
  EXPECT_EQ(s.signal, SIGSEGV);
  EXPECT_TRUE(s.core_dumped);
}

TEST(ExitStatusFromWaitStatus, Exited) {
  ExitStatus s = exit_status_from_wait_status(W_EXITCODE(42, 0));
  EXPECT_EQ(s.exit_code, 42);
  EXPECT_FALSE(s.signal.has_value());
  EXPECT_FALSE(s.core_dumped);
}

TEST(ExitStatusFromWaitStatus, KilledAndDumped) {
  ExitStatus killed = exit_status_from_wait_status(W_EXITCODE(0, SIGTERM));
  EXPECT_EQ(killed.exit_code, 128 + SIGTERM);
  EXPECT_EQ(killed.signal, SIGTERM);
  EXPECT_FALSE(killed.core_dumped);

  ExitStatus dumped = exit_status_from_wait_status(W_EXITCODE(0, SIGABRT) | WCOREFLAG);
  EXPECT_EQ(dumped.exit_code, 128 + SIGABRT);
  EXPECT_EQ(dumped.signal, SIGABRT);
  EXPECT_TRUE(dumped.core_dumped);
}

TEST(ExitStatusFromWaitStatus, StoppedIsNotAnExit) {
  ExitStatus s = exit_status_from_wait_status(W_STOPCODE(SIGSTOP));
  EXPECT_EQ(s.exit_code, -1);
  EXPECT_FALSE(s.signal.has_value());
}

}  // namespace
}  // namespace codexd::exec
