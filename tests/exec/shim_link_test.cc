// The daemon's end of a real codexd-shim: the link names the shim itself (not the daemon) for
// the wait at shutdown, and a shim told to go while the daemon left output unread ends and
// takes its command with it.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <fstream>

#include "daemon/exec/shim_link.h"
#include "platform/posix/fd_passing.h"
#include "tests/exec/launch_test_util.h"
#include "tests/support/temp_dir.h"

namespace codexd::exec {
namespace {

// A bound that only guards against a hang; a working shim ends in milliseconds.
constexpr int kHangGuardMs = 30'000;

bool readable_within(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1;
}

bool signal_pidfd(int pidfd, int signal) { return ::syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0) == 0; }


class ShimLinkTest : public ::testing::Test {
 protected:
  Result<std::shared_ptr<ShimLink>> launch(const std::string& script) {
    ShimConfig config{CODEXD_TEST_BIN_DIR "/codexd-shim", dir_.path()};
    const std::string session_dir = dir_.sub("1");
    if (::mkdir(session_dir.c_str(), 0700) != 0) return ErrnoStatus("mkdir", errno);
    return ShimLink::launch(io_, config, session_dir, testing_util::shell_spawn_request(script), 64 * 1024);
  }
  boost::asio::io_context io_;
  ::codexd::testing::TempDir dir_{"codexd-shim-link"};
};

TEST_F(ShimLinkTest, ThePidfdIsTheShimsAndBecomesReadableWhenItEnds) {
  auto link = launch("exec sleep 1000");
  ASSERT_TRUE(link.ok()) << link.status().message();
  const int shim = (*link)->shim_pidfd();
  ASSERT_GE(shim, 0);
  EXPECT_FALSE(readable_within(shim, 0)) << "the shim has not been told to go";
  (*link)->release();
  EXPECT_TRUE(readable_within(shim, kHangGuardMs)) << "released, the shim did not end";
  EXPECT_NE(::kill((*link)->pid(), 0), 0) << "its command outlived it";
}

// A shim driven by hand, as the daemon's end does: the handshake, then what the test wants.
struct HandDrivenShim {
  UniqueFd daemon_end;
  posix::SpawnedProcess shim;
  pid_t command = -1;
};

Result<HandDrivenShim> start_by_hand(const std::string& session_dir, const std::string& script) {
  CODEXD_ASSIGN_OR_RETURN(posix::SocketPair pair, posix::make_seqpacket_pair());
  posix::SpawnRequest shim_request;
  shim_request.executable = CODEXD_TEST_BIN_DIR "/codexd-shim";
  shim_request.argv = {shim_request.executable, session_dir};
  shim_request.cwd = "/";
  shim_request.parent_death_signal = 0;
  shim_request.pass_fd = pair.second.get();
  HandDrivenShim out;
  CODEXD_ASSIGN_OR_RETURN(out.shim, posix::spawn_process(shim_request));
  pair.second.reset();
  CODEXD_RETURN_IF_ERROR(posix::send_fds(pair.first.get(), shim::encode(shim::Type::kSpawnFds), {}));
  const std::string spawn = shim::encode(shim::Type::kSpawn, shim::spawn_request_json(testing_util::shell_spawn_request(script), 64 * 1024, false));
  if (::send(pair.first.get(), spawn.data(), spawn.size(), MSG_NOSIGNAL) < 0) return ErrnoStatus("send", errno);
  std::string reply(shim::kMaxMessage, '\0');
  const ssize_t n = ::recv(pair.first.get(), reply.data(), reply.size(), 0);
  if (n <= 0 || reply[0] != static_cast<char>(shim::Type::kSpawned)) return Internal("the shim did not spawn");
  CODEXD_ASSIGN_OR_RETURN(out.command, shim::decode_pid(std::string_view(reply).substr(1, static_cast<size_t>(n) - 1)));
  out.daemon_end = std::move(pair.first);
  return out;
}

// The kernel reports "connection reset" to the shim, before the daemon's last message, when
// the daemon closes with output of the shim unread (unix_release_sock). Stopping the shim
// across send-and-close makes that order certain.
TEST_F(ShimLinkTest, AReleaseFollowedByACloseWithOutputUnreadStillEndsTheShim) {
  const std::string session_dir = dir_.sub("2");
  ASSERT_EQ(::mkdir(session_dir.c_str(), 0700), 0);
  auto shim = start_by_hand(session_dir, "echo unread; exec sleep 1000");
  ASSERT_TRUE(shim.ok()) << shim.status().message();
  ASSERT_TRUE(readable_within(shim->daemon_end.get(), kHangGuardMs)) << "no output from the shim";
  const int shim_pidfd = shim->shim.pidfd.get();
  ASSERT_TRUE(signal_pidfd(shim_pidfd, SIGSTOP));
  const std::string release = shim::encode(shim::Type::kRelease);
  ASSERT_EQ(::send(shim->daemon_end.get(), release.data(), release.size(), MSG_NOSIGNAL), 1);
  shim->daemon_end.reset();  // output still unread
  ASSERT_TRUE(signal_pidfd(shim_pidfd, SIGCONT));
  const bool ended = readable_within(shim_pidfd, kHangGuardMs);
  EXPECT_TRUE(ended) << "the shim missed the release and waits for another daemon";
  if (!ended) signal_pidfd(shim_pidfd, SIGKILL);  // its command dies with it (parent-death signal)
  EXPECT_NE(::kill(shim->command, 0), 0) << "its command outlived it";
}

// The spawn request says whether the session is sandboxed (its shim then takes
// no_new_privs); an older daemon's request without the field means not sandboxed.
TEST(ShimProtocol, SandboxedTravelsAndItsAbsenceMeansNotSandboxed) {
  const auto request = testing_util::shell_spawn_request("true");
  for (bool sandboxed : {false, true}) {
    auto parsed = shim::parse_spawn_request(shim::spawn_request_json(request, 4096, sandboxed));
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(parsed->sandboxed, sandboxed);
  }
  std::string older = shim::spawn_request_json(request, 4096, true);
  const std::string field = ",\"sandboxed\":true";
  ASSERT_NE(older.find(field), std::string::npos) << older;
  older.erase(older.find(field), field.size());
  auto parsed = shim::parse_spawn_request(older);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_FALSE(parsed->sandboxed);
}

}  // namespace
}  // namespace codexd::exec
