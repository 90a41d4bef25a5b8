// Network escapes with the network off: real listeners on the host, probes inside. Both
// backends (bwrap: new network namespace + seccomp; Landlock: seccomp + Landlock TCP rules).
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/sandbox/backend_param.h"
#include "tests/sandbox/escape_expect.h"
#include "tests/sandbox/host_listeners.h"

namespace codexd::sandbox::testing {
namespace {

class NetworkEscape : public BackendTest {
 protected:
  void SetUp() override { ws_ = dir_.make_dir("ws"); }
  ScratchDir dir_;
  std::string ws_;
};

std::string unique_name(const std::string& what) {
  return "codexd-test-" + what + "-" + std::to_string(::getpid());
}

TEST_P(NetworkEscape, NoTcpOverIpv4OrIpv6) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  HostListener tcp4(ListenerKind::kTcp4);
  ASSERT_TRUE(tcp4.ready()) << tcp4.error();
  expect_blocked(*manager, spec, ws_, {"tcp4", "127.0.0.1", std::to_string(tcp4.port())});
  EXPECT_EQ(tcp4.served(), 1) << "only the control may have reached the listener";

  HostListener tcp6(ListenerKind::kTcp6);
  if (!tcp6.ready()) GTEST_SKIP() << "no IPv6 loopback on this host: " << tcp6.error();
  expect_blocked(*manager, spec, ws_, {"tcp6", "::1", std::to_string(tcp6.port())});
  EXPECT_EQ(tcp6.served(), 1);
}

TEST_P(NetworkEscape, NoUdpAndNoDns) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  HostListener udp(ListenerKind::kUdp4);
  ASSERT_TRUE(udp.ready()) << udp.error();
  expect_blocked(*manager, spec, ws_, {"udp4", "127.0.0.1", std::to_string(udp.port())});
  EXPECT_EQ(udp.served(), 1);

  HostListener dns(ListenerKind::kDns);
  ASSERT_TRUE(dns.ready()) << dns.error();
  expect_blocked(*manager, spec, ws_, {"dns", "127.0.0.1", std::to_string(dns.port())});
  EXPECT_EQ(dns.served(), 1);
}

TEST_P(NetworkEscape, NoAbstractUnixSocket) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  std::string name = unique_name("abstract");
  HostListener listener(ListenerKind::kAbstract, name);
  ASSERT_TRUE(listener.ready()) << listener.error();
  expect_blocked(*manager, spec, ws_, {"abstract", name});
  EXPECT_EQ(listener.served(), 1);
}

TEST_P(NetworkEscape, NoFilesystemUnixSocketEvenInsideTheWorkspace) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  std::string path = ws_ + "/host.sock";  // visible and writable in the sandbox view
  HostListener listener(ListenerKind::kUnixStream, path);
  ASSERT_TRUE(listener.ready()) << listener.error();
  expect_blocked(*manager, spec, ws_, {"unix-stream", path});
  EXPECT_EQ(listener.served(), 1);
}

TEST_P(NetworkEscape, NoDatagramToAHostUnixSocket) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SandboxSpec spec = make_spec(ws_);
  std::string path = ws_ + "/host-dgram.sock";
  HostDatagramSink sink(path);
  ASSERT_TRUE(sink.ready());
  // Codex 0.169 lets sendmsg through; every variant must fail here.
  for (const char* how : {"sendto", "sendmsg", "socketpair"}) {
    RunResult run = run_probe_sandboxed(*manager, spec, ws_, {"unix-dgram", path, how});
    EXPECT_FALSE(run.succeeded()) << how << ": " << run.describe();
    EXPECT_EQ(sink.received(), 0) << how << " reached the host socket";
    RunResult control = run_probe_unsandboxed(ws_, {"unix-dgram", path, how});
    EXPECT_TRUE(control.succeeded()) << how << ": " << control.describe();
    EXPECT_EQ(sink.received(), 1) << how;
  }
}

TEST_P(NetworkEscape, SocketpairsKeepWorking) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  expect_allowed(*manager, make_spec(ws_), ws_, {"socketpair-send"});
}

TEST_P(NetworkEscape, NetworkOnReachesTheHost) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SpecOptions options;
  options.network = true;
  HostListener tcp4(ListenerKind::kTcp4);
  ASSERT_TRUE(tcp4.ready()) << tcp4.error();
  expect_allowed(*manager, make_spec(ws_, options), ws_, {"tcp4", "127.0.0.1", std::to_string(tcp4.port())});
  EXPECT_EQ(tcp4.served(), 1);
}

// codexd's own socket directory is masked; it must stay unreachable even with the network on.
TEST_P(NetworkEscape, DaemonSocketDirectoryIsUnreachableEvenWithNetwork) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  std::string socket_dir = dir_.make_dir("run/codexd");
  std::string socket_path = socket_dir + "/codexd.sock";
  std::string token = dir_.make_file("run/codexd/token", "daemon-token\n");
  HostListener daemon(ListenerKind::kUnixStream, socket_path);
  ASSERT_TRUE(daemon.ready()) << daemon.error();
  for (bool network : {false, true}) {
    SpecOptions options;
    options.network = network;
    options.masked = {socket_dir};
    SandboxSpec spec = make_spec(ws_, options);
    SCOPED_TRACE(network ? "network on" : "network off");
    expect_blocked(*manager, spec, ws_, {"unix-stream", socket_path});
    RunResult read = run_probe_sandboxed(*manager, spec, ws_, {"read", token});
    EXPECT_FALSE(read.succeeded()) << read.describe();
    EXPECT_EQ(read.output.find("daemon-token"), std::string::npos);
  }
  EXPECT_EQ(daemon.served(), 2) << "only the two controls may have connected";
}

// The same with the socket directory inside the (writable) workspace: the mask must win over
// the writable bind.
TEST_P(NetworkEscape, DaemonSocketDirectoryInsideAWritableRootStaysMasked) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  std::string socket_dir = dir_.make_dir("ws/run/codexd");
  std::string socket_path = socket_dir + "/codexd.sock";
  HostListener daemon(ListenerKind::kUnixStream, socket_path);
  ASSERT_TRUE(daemon.ready()) << daemon.error();
  SpecOptions options;
  options.network = true;
  options.masked = {socket_dir};
  SandboxSpec spec = make_spec(ws_, options);
  expect_blocked(*manager, spec, ws_, {"unix-stream", socket_path});
  expect_blocked(*manager, spec, ws_, {"write", socket_dir + "/planted"},
                 [&] { EXPECT_FALSE(path_exists(socket_dir + "/planted")); },
                 {"write", ws_ + "/control-planted"});
  EXPECT_EQ(daemon.served(), 1);
}

CODEXD_INSTANTIATE_BOTH_BACKENDS(NetworkEscape);

}  // namespace
}  // namespace codexd::sandbox::testing
