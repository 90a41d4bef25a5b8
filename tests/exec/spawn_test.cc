#include "platform/posix/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <poll.h>

#include <sstream>
#include <string>

#include "tests/support/wait_exit.h"

namespace codexd::posix {
namespace {

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      pollfd p{fd, POLLIN, 0};
      ::poll(&p, 1, 10000);
      continue;
    }
    return out;  // EOF (or EIO on a PTY)
  }
}

int wait_exit(pid_t pid) { return codexd::testing::wait_exit_code(pid); }

SpawnRequest shell(const std::string& script, StdioMode mode = StdioMode::kPipesMerged) {
  SpawnRequest r;
  r.executable = "/bin/sh";
  r.argv = {"sh", "-c", script};
  r.env = {"PATH=/usr/bin:/bin"};
  r.cwd = "/";
  r.stdio = mode;
  return r;
}

TEST(Spawn, RunsWithExactlyTheGivenEnvironmentAndCwd) {
  auto r = shell("env; pwd");
  r.env = {"PATH=/usr/bin:/bin", "ONLY_THIS=1"};
  r.cwd = "/tmp";
  auto p = spawn_process(r);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  std::string out = read_all(p->output.get());
  EXPECT_EQ(wait_exit(p->pid), 0);
  EXPECT_THAT(out, ::testing::HasSubstr("ONLY_THIS=1"));
  EXPECT_THAT(out, ::testing::HasSubstr("/tmp\n"));
  EXPECT_THAT(out, ::testing::Not(::testing::HasSubstr("HOME=")));
}

TEST(Spawn, ChildIsSessionAndGroupLeaderWithStdinFromDevNull) {
  auto p = spawn_process(shell("ps -o pid=,pgid=,sid= -p $$; read x; echo read=$?"));
  ASSERT_TRUE(p.ok());
  std::string out = read_all(p->output.get());
  wait_exit(p->pid);
  std::string pid = std::to_string(p->pid);
  EXPECT_THAT(out, ::testing::ContainsRegex(pid + " +" + pid + " +" + pid));
  EXPECT_THAT(out, ::testing::HasSubstr("read=1"));  // EOF at once
}

TEST(Spawn, NoDescriptorLeaksIntoTheChild) {
  // A descriptor the daemon forgot to mark close-on-exec still does not cross.
  int opened = ::open("/dev/null", O_RDONLY);
  int leaked = ::dup2(opened, 77);  // dup2 leaves it without O_CLOEXEC: a deliberate leak
  ::close(opened);
  ASSERT_EQ(leaked, 77);
  auto p = spawn_process(shell("ls /proc/self/fd"));
  ASSERT_TRUE(p.ok());
  std::string out = read_all(p->output.get());
  wait_exit(p->pid);
  ::close(leaked);
  // Only 0, 1, 2 and the fd ls itself opens to read the directory.
  std::vector<std::string> fds;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) fds.push_back(line);
  EXPECT_THAT(fds, ::testing::IsSupersetOf({"0", "1", "2"}));
  EXPECT_LE(fds.size(), 4u) << out;
  EXPECT_THAT(fds, ::testing::Not(::testing::Contains(std::to_string(leaked))));
}

TEST(Spawn, SeparateStderr) {
  auto p = spawn_process(shell("echo out; echo err >&2", StdioMode::kPipesSeparate));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(read_all(p->output.get()), "out\n");
  EXPECT_EQ(read_all(p->error.get()), "err\n");
  EXPECT_EQ(wait_exit(p->pid), 0);
}

TEST(Spawn, PtyIsTheControllingTerminalWithTheRequestedSize) {
  auto r = shell("stty size; tty -s && echo is-a-tty", StdioMode::kPty);
  r.rows = 33;
  r.cols = 101;
  auto p = spawn_process(r);
  ASSERT_TRUE(p.ok());
  std::string out = read_all(p->output.get());
  wait_exit(p->pid);
  EXPECT_THAT(out, ::testing::HasSubstr("33 101"));
  EXPECT_THAT(out, ::testing::HasSubstr("is-a-tty"));
}

TEST(Spawn, ReportsTheFailingStep) {
  auto r = shell("true");
  r.cwd = "/definitely/not/here";
  auto p = spawn_process(r);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), ::testing::HasSubstr("chdir /definitely/not/here"));
  r = shell("true");
  r.executable = "/no/such/binary";
  p = spawn_process(r);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), ::testing::HasSubstr("execve /no/such/binary: No such file or directory"));
}

TEST(Spawn, RejectsNulBytesAndRelativeCwd) {
  auto r = shell("true");
  r.argv.push_back(std::string("a\0b", 3));
  EXPECT_EQ(spawn_process(r).status().code(), StatusCode::kInvalidArgument);
  r = shell("true");
  r.cwd = "tmp";
  EXPECT_EQ(spawn_process(r).status().code(), StatusCode::kInvalidArgument);
}

TEST(Spawn, SignalDispositionsAndMaskAreReset) {
  // The daemon ignores SIGPIPE and blocks signals on some threads; children must not inherit that.
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  struct sigaction old {};
  ::sigaction(SIGPIPE, &ign, &old);
  sigset_t block, saved;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &block, &saved);
  auto p = spawn_process(shell("grep -E '^(SigIgn|SigBlk)' /proc/self/status"));
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  ::sigaction(SIGPIPE, &old, nullptr);
  ASSERT_TRUE(p.ok());
  std::string out = read_all(p->output.get());
  wait_exit(p->pid);
  EXPECT_THAT(out, ::testing::HasSubstr("SigIgn:\t0000000000000000"));
  EXPECT_THAT(out, ::testing::HasSubstr("SigBlk:\t0000000000000000"));
}

TEST(Spawn, ResolvesInTheChildPathNotOurs) {
  auto found = resolve_executable("sh", {"PATH=/nonexistent:/bin"}, "/");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, "/bin/sh");
  EXPECT_EQ(resolve_executable("sh", {"PATH=/nonexistent"}, "/").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*resolve_executable("./x", {}, "/work"), "/work/./x");
}

TEST(Spawn, DropsToAnotherUid) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch uid";
  auto r = shell("id -u; id -g; id -G");
  r.credentials = Credentials{65534, 65534, {65534}};
  auto p = spawn_process(r);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  std::string out = read_all(p->output.get());
  EXPECT_EQ(wait_exit(p->pid), 0);
  EXPECT_EQ(out, "65534\n65534\n65534\n");
}

}  // namespace
}  // namespace codexd::posix
