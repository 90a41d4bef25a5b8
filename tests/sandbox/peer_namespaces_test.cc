// The daemon-side check that refuses connections from sandboxed processes.
#include "platform/linux/peer_namespaces.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "tests/sandbox/sandbox_test_support.h"

namespace codexd::sandbox::testing {
namespace {

using linux_backend::peer_in_same_namespaces;
using linux_backend::socket_peer_in_same_namespaces;

TEST(PeerNamespaces, OwnProcessPasses) {
  std::string why;
  EXPECT_TRUE(peer_in_same_namespaces(::getpid(), &why)) << why;
}

TEST(PeerNamespaces, PidZeroAndDeadPidsFailClosed) {
  std::string why;
  EXPECT_FALSE(peer_in_same_namespaces(0, &why));
  EXPECT_NE(why.find("pid namespace"), std::string::npos) << why;
  EXPECT_FALSE(peer_in_same_namespaces(-1, &why));
  EXPECT_FALSE(peer_in_same_namespaces(0x3ffffff0, &why));  // above pid_max
  EXPECT_NE(why.find("cannot read"), std::string::npos) << why;
}

// A listener that, like the daemon's accept path, checks every peer and records the verdict.
class CheckingListener {
 public:
  explicit CheckingListener(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    ready_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(fd_, 4) == 0;
  }
  ~CheckingListener() { ::close(fd_); }
  bool ready() const { return ready_; }

  // Accepts one connection (the probe's), answers "pong", returns the check's verdict.
  bool accept_one(std::string* why) {
    int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) return false;
    bool same = socket_peer_in_same_namespaces(conn, why);
    char buf[8];
    pollfd p{conn, POLLIN, 0};
    if (::poll(&p, 1, 10000) > 0 && ::recv(conn, buf, sizeof buf, 0) > 0) ::send(conn, "pong", 4, MSG_NOSIGNAL);
    ::close(conn);
    return same;
  }

 private:
  int fd_ = -1;
  bool ready_ = false;
};

TEST(PeerNamespaces, SandboxedPeerIsRecognizedAndHostPeerAccepted) {
  std::string reason;
  const SandboxManager* manager = manager_for(TestBackend::kBwrap, &reason);
  if (manager == nullptr) GTEST_SKIP() << reason;
  ScratchDir dir;
  std::string ws = dir.make_dir("ws");
  std::string path = dir.sub("daemon.sock");  // deliberately not masked: the second layer
  CheckingListener listener(path);
  ASSERT_TRUE(listener.ready());

  SpecOptions options;
  options.network = NetworkMode::kHost;  // with the network off connect() itself is refused
  std::string why;
  bool verdict = true;
  std::thread server([&] { verdict = listener.accept_one(&why); });
  RunResult sandboxed = run_probe_sandboxed(*manager, make_spec(ws, options), ws, {"unix-stream", path});
  server.join();
  EXPECT_TRUE(sandboxed.succeeded()) << "the probe should reach the unmasked socket: " << sandboxed.describe();
  EXPECT_FALSE(verdict) << "a sandboxed peer passed the namespace check";
  EXPECT_NE(why.find("different"), std::string::npos) << why;

  server = std::thread([&] { verdict = listener.accept_one(&why); });
  RunResult host = run_probe_unsandboxed(ws, {"unix-stream", path});
  server.join();
  EXPECT_TRUE(host.succeeded()) << host.describe();
  EXPECT_TRUE(verdict) << why;
}

}  // namespace
}  // namespace codexd::sandbox::testing
