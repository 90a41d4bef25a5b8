// The daemon's end of a real codexd-shim: the link names the shim itself (not the daemon) for
// the wait at shutdown, a shim told to go while the daemon left output unread ends and takes
// its command with it, and the proxy ports of a sandbox in network mode proxy reach every
// daemon the shim serves (and an older shim without them is still adopted).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sys/un.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <thread>

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
  const UniqueFd ended = (*link)->release();
  EXPECT_EQ(ended.get(), shim) << "release hands over the same pidfd";
  EXPECT_EQ((*link)->shim_pidfd(), -1) << "a released link keeps no descriptor of its shim";
  EXPECT_TRUE(readable_within(ended.get(), kHangGuardMs)) << "released, the shim did not end";
  EXPECT_NE(::kill((*link)->pid(), 0), 0) << "its command outlived it";
}

// A shim driven by hand, as the daemon's end does: the handshake, then what the test wants.
struct HandDrivenShim {
  UniqueFd daemon_end;
  posix::SpawnedProcess shim;
  pid_t command = -1;
};

Result<HandDrivenShim> start_by_hand(const std::string& session_dir, const std::string& script,
                                     size_t attach_window_bytes = 64 * 1024) {
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
  const std::string spawn = shim::encode(shim::Type::kSpawn, shim::spawn_request_json(testing_util::shell_spawn_request(script), attach_window_bytes, false));
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

char process_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return 0;
  const size_t paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() ? 0 : line[paren + 2];
}

// "Output closed" and the exit follow the last byte of output. They once went into the shim's
// outbox as soon as they happened, ahead of output still in its ring whenever the daemon had
// not been reading (a lossless Attach holding it back): a watcher then got the exit early.
TEST_F(ShimLinkTest, OutputClosedAndTheExitComeAfterTheLastByte) {
  const std::string session_dir = dir_.sub("3");
  ASSERT_EQ(::mkdir(session_dir.c_str(), 0700), 0);
  constexpr uint64_t kBytes = 1'000'000;  // more than the socket holds, less than that and the 1 MiB ring
  auto shim = start_by_hand(session_dir, "exec head -c " + std::to_string(kBytes) + " /dev/zero", 1024 * 1024);
  ASSERT_TRUE(shim.ok()) << shim.status().message();
  // Nothing read until the command has written everything and ended (a zombie until kReap).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kHangGuardMs);
  while (process_state(shim->command) != 'Z' && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(process_state(shim->command), 'Z') << "the command could not write all of its output";
  uint64_t received = 0;
  std::optional<uint64_t> at_closed, at_exit;
  std::string message(shim::kMaxMessage, '\0');
  while (!at_exit || !at_closed) {
    ASSERT_TRUE(readable_within(shim->daemon_end.get(), kHangGuardMs)) << "the shim went quiet at " << received;
    const ssize_t n = ::recv(shim->daemon_end.get(), message.data(), message.size(), 0);
    ASSERT_GT(n, 0);
    const std::string_view m(message.data(), static_cast<size_t>(n));
    if (m[0] == static_cast<char>(shim::Type::kOutput)) {
      auto chunk = shim::decode_offset_data(m.substr(1));
      ASSERT_TRUE(chunk.ok());
      EXPECT_EQ(chunk->first, received) << "output after the exit or out of order";
      received = chunk->first + chunk->second.size();
    } else if (m[0] == static_cast<char>(shim::Type::kOutputClosed)) {
      at_closed = received;
    } else if (m[0] == static_cast<char>(shim::Type::kExited)) {
      at_exit = received;
    }
  }
  EXPECT_EQ(*at_closed, kBytes) << "\"output closed\" overtook output";
  EXPECT_EQ(*at_exit, kBytes) << "the exit overtook output";
  const std::string release = shim::encode(shim::Type::kRelease);
  ::send(shim->daemon_end.get(), release.data(), release.size(), MSG_NOSIGNAL);
  EXPECT_TRUE(readable_within(shim->shim.pidfd.get(), kHangGuardMs)) << "released, the shim did not end";
}

// Open descriptors of a process: the shim's accept of a new daemon (and its close of the old
// one) shows here, and nowhere else from outside.
size_t open_fds(pid_t pid) {
  std::error_code ec;
  size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

bool wait_for(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kHangGuardMs);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

UniqueFd connect_to_shim(const std::string& session_dir) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", (session_dir + "/shim.sock").c_str());
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return UniqueFd();
  return fd;
}

// A restarted daemon gets the output from the state's begin_offset on, also when output came
// between the shim's accept and the daemon's hello. It once went out from the offset of the
// accept (found by CI under load: the daemon then reported a gap over the session's start).
TEST_F(ShimLinkTest, AReconnectingDaemonGetsTheOutputFromTheStatesBeginAlsoWhatCameBeforeItsHello) {
  const std::string session_dir = dir_.sub("5");
  ASSERT_EQ(::mkdir(session_dir.c_str(), 0700), 0);
  const std::string go = session_dir + "/go";
  ASSERT_EQ(::mkfifo(go.c_str(), 0600), 0);
  const std::string done = session_dir + "/done";
  constexpr int kLate = 200'000;  // more than a pipe holds: written whole only once the shim read it
  auto shim = start_by_hand(session_dir, "echo early; read x < " + go + "; head -c " + std::to_string(kLate) +
                                             " /dev/zero; : > " + done + "; exec sleep 1000",
                            1024 * 1024);
  ASSERT_TRUE(shim.ok()) << shim.status().message();
  ASSERT_TRUE(readable_within(shim->daemon_end.get(), kHangGuardMs)) << "no output from the shim";
  const pid_t shim_pid = shim->shim.pid;
  const size_t connected_fds = open_fds(shim_pid);

  // The first daemon goes without a word (as under SIGKILL); the shim notices.
  shim->daemon_end.reset();
  ASSERT_TRUE(wait_for([&] { return open_fds(shim_pid) < connected_fds; })) << "the shim kept the old connection";
  // The next one connects; the shim accepts; output comes before the hello.
  UniqueFd daemon = connect_to_shim(session_dir);
  ASSERT_TRUE(daemon.valid()) << std::strerror(errno);
  ASSERT_TRUE(wait_for([&] { return open_fds(shim_pid) == connected_fds; })) << "the shim did not accept";
  {
    std::ofstream(go) << "x\n";
  }
  ASSERT_TRUE(wait_for([&] { return std::filesystem::exists(done); })) << "the shim did not read the output";

  const std::string hello = shim::encode(shim::Type::kHello);
  ASSERT_EQ(::send(daemon.get(), hello.data(), hello.size(), MSG_NOSIGNAL), 1);
  std::string message(shim::kMaxMessage, '\0');
  std::optional<shim::ShimState> state;
  uint64_t next = 0;
  while (next < 6 + kLate) {
    ASSERT_TRUE(readable_within(daemon.get(), kHangGuardMs)) << "the shim went quiet at " << next;
    const ssize_t n = ::recv(daemon.get(), message.data(), message.size(), 0);
    ASSERT_GT(n, 0);
    const std::string_view m(message.data(), static_cast<size_t>(n));
    if (m[0] == static_cast<char>(shim::Type::kState)) {
      auto parsed = shim::parse_state(m.substr(1));
      ASSERT_TRUE(parsed.ok()) << parsed.status().message();
      state = *parsed;
      EXPECT_EQ(state->begin_offset, 0u);
      next = state->begin_offset;
    } else if (m[0] == static_cast<char>(shim::Type::kOutput)) {
      ASSERT_TRUE(state.has_value()) << "output before the state";
      auto chunk = shim::decode_offset_data(m.substr(1));
      ASSERT_TRUE(chunk.ok());
      ASSERT_EQ(chunk->first, next) << "the output does not continue from the state's begin_offset";
      if (next == 0) {
        EXPECT_EQ(chunk->second.substr(0, 6), "early\n");
      }
      next = chunk->first + chunk->second.size();
    }
  }
  const std::string release = shim::encode(shim::Type::kRelease);
  ::send(daemon.get(), release.data(), release.size(), MSG_NOSIGNAL);
  EXPECT_TRUE(readable_within(shim->shim.pidfd.get(), kHangGuardMs)) << "released, the shim did not end";
}

// A daemon killed a moment ago may still hold its connection in the shim's eyes (its close not
// yet read): the restarted one is served once the shim reads that close, not turned away.
TEST_F(ShimLinkTest, ADaemonThatConnectsBeforeTheShimSawItsPredecessorGoIsServed) {
  const std::string session_dir = dir_.sub("6");
  ASSERT_EQ(::mkdir(session_dir.c_str(), 0700), 0);
  auto shim = start_by_hand(session_dir, "echo early; exec sleep 1000");
  ASSERT_TRUE(shim.ok()) << shim.status().message();
  ASSERT_TRUE(readable_within(shim->daemon_end.get(), kHangGuardMs)) << "no output from the shim";
  const int shim_pidfd = shim->shim.pidfd.get();
  // Stopped, the shim cannot see the close before the new connection is there too.
  ASSERT_TRUE(signal_pidfd(shim_pidfd, SIGSTOP));
  shim->daemon_end.reset();
  UniqueFd daemon = connect_to_shim(session_dir);
  ASSERT_TRUE(daemon.valid()) << std::strerror(errno);
  const std::string hello = shim::encode(shim::Type::kHello);
  ASSERT_EQ(::send(daemon.get(), hello.data(), hello.size(), MSG_NOSIGNAL), 1);
  ASSERT_TRUE(signal_pidfd(shim_pidfd, SIGCONT));
  ASSERT_TRUE(readable_within(daemon.get(), kHangGuardMs)) << "the shim did not answer";
  std::string message(shim::kMaxMessage, '\0');
  const ssize_t n = ::recv(daemon.get(), message.data(), message.size(), 0);
  ASSERT_GT(n, 0) << "the shim turned the new daemon away";
  EXPECT_EQ(message[0], static_cast<char>(shim::Type::kState));
  const std::string release = shim::encode(shim::Type::kRelease);
  ::send(daemon.get(), release.data(), release.size(), MSG_NOSIGNAL);
  EXPECT_TRUE(readable_within(shim_pidfd, kHangGuardMs)) << "released, the shim did not end";
}

TEST(ShimProtocol, TheSpawnRequestSaysWhetherTheShimRelaysTheProxy) {
  const auto request = testing_util::shell_spawn_request("true");
  auto plain = shim::parse_spawn_request(shim::spawn_request_json(request, 1024, false));
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_FALSE(plain->relays_proxy);
  auto relaying = shim::parse_spawn_request(shim::spawn_request_json(request, 1024, false, true));
  ASSERT_TRUE(relaying.ok()) << relaying.status().message();
  EXPECT_TRUE(relaying->relays_proxy);
}

// The inode of a descriptor: a relayed copy names the same file.
ino_t inode_of(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? st.st_ino : 0;
}

// One relayed handover as the daemon's proxy reads it: the sandbox's payload and copies of
// its descriptors, then the end of the channel.
void expect_relayed(int channel, const std::string& payload, const std::vector<ino_t>& inodes) {
  ASSERT_TRUE(readable_within(channel, kHangGuardMs)) << "nothing was relayed";
  auto received = posix::receive_fds(channel);
  ASSERT_TRUE(received.ok()) << received.status().message();
  EXPECT_EQ(received->payload, payload);
  ASSERT_EQ(received->fds.size(), inodes.size());
  for (size_t i = 0; i < inodes.size(); ++i) EXPECT_EQ(inode_of(received->fds[i].get()), inodes[i]) << i;
  EXPECT_EQ(posix::receive_fds(channel).status().code(), StatusCode::kNotFound) << "one message per channel";
}

// Reconnects as a restarted daemon does. The shim may not have seen the previous daemon's
// close yet (it then turns the new connection away): each attempt waits for its answer.
Result<std::shared_ptr<ShimLink>> reconnect(boost::asio::io_context& io, const std::string& dir, shim::ShimState& state,
                                            UniqueFd& relay) {
  for (int attempt = 0;; ++attempt) {
    auto link = ShimLink::reconnect(io, dir, state, &relay);
    if (link.ok() || link.status().code() != StatusCode::kUnavailable || attempt == 1000) return link;
  }
}

TEST_F(ShimLinkTest, TheSandboxsProxyPortsAreRelayedToTheFirstDaemonAndToEveryReconnectingOne) {
  const std::string session_dir = dir_.sub("3");
  ASSERT_EQ(::mkdir(session_dir.c_str(), 0700), 0);
  auto channel = posix::make_seqpacket_pair();
  ASSERT_TRUE(channel.ok());
  auto request = testing_util::shell_spawn_request("exec sleep 1000");
  request.pass_fd = channel->second.get();  // the sandbox's end; the test sends on it as the helper does
  UniqueFd proxy = std::move(channel->first);
  ShimConfig config{CODEXD_TEST_BIN_DIR "/codexd-shim", dir_.path()};
  auto link = ShimLink::launch(io_, config, session_dir, request, 64 * 1024, {}, &proxy);
  ASSERT_TRUE(link.ok()) << link.status().message();
  ASSERT_TRUE(proxy.valid());

  // Two "listeners" (pipes have inodes of their own) and the helper's message.
  int http[2];
  int socks[2];
  ASSERT_EQ(::pipe2(http, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(socks, O_CLOEXEC), 0);
  UniqueFd held[] = {UniqueFd(http[0]), UniqueFd(http[1]), UniqueFd(socks[0]), UniqueFd(socks[1])};
  const std::vector<ino_t> inodes = {inode_of(http[0]), inode_of(socks[0])};
  const std::string payload = "codexd-proxy/1 http=3128 socks=1080";
  ASSERT_TRUE(posix::send_fds(channel->second.get(), payload, {http[0], socks[0]}).ok());
  channel->second.reset();
  expect_relayed(proxy.get(), payload, inodes);

  // Each later daemon gets its own copy, with the state.
  for (int restart = 0; restart < 2; ++restart) {
    SCOPED_TRACE(restart);
    (*link)->detach();
    shim::ShimState state;
    UniqueFd relay;
    link = reconnect(io_, session_dir, state, relay);
    ASSERT_TRUE(link.ok()) << link.status().message();
    EXPECT_EQ(state.protocol, shim::kShimProtocolVersion);
    EXPECT_GT(state.pid, 0);
    ASSERT_TRUE(relay.valid()) << "the reconnecting daemon got no proxy channel";
    expect_relayed(relay.get(), payload, inodes);
  }
  const UniqueFd ended = (*link)->release();
  EXPECT_TRUE(readable_within(ended.get(), kHangGuardMs)) << "released, the shim did not end";
}

// A shim of protocol 1 (before the proxy relay) answers hello with its state only: it is
// still adopted, without a proxy channel.
TEST_F(ShimLinkTest, AShimOfProtocolOneIsAdoptedWithoutAProxyChannel) {
  const std::string session_dir = dir_.sub("4");
  ASSERT_EQ(::mkdir(session_dir.c_str(), 0700), 0);
  UniqueFd listener(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", (session_dir + "/shim.sock").c_str());
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener.get(), 1), 0);
  std::thread old_shim([&] {
    UniqueFd peer(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    char hello[16];
    if (::recv(peer.get(), hello, sizeof hello, 0) != 1 || hello[0] != static_cast<char>(shim::Type::kHello)) return;
    shim::ShimState state;
    state.protocol = 1;
    state.pid = ::getpid();
    const std::string reply = shim::encode(shim::Type::kState, shim::state_json(state));
    ::send(peer.get(), reply.data(), reply.size(), MSG_NOSIGNAL);
    ::recv(peer.get(), hello, sizeof hello, 0);  // until the daemon's end closes
  });
  shim::ShimState state;
  UniqueFd relay;
  auto link = ShimLink::reconnect(io_, session_dir, state, &relay);
  if (link.ok()) (*link)->detach();
  old_shim.join();  // its connection is closed either way
  ASSERT_TRUE(link.ok()) << link.status().message();
  EXPECT_EQ(state.protocol, 1);
  EXPECT_FALSE(relay.valid());
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
