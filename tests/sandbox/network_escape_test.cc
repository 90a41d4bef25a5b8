// Network escapes with the network off and in proxy mode: real listeners on the host, probes
// inside. Both backends (bwrap: new network namespace + seccomp; Landlock: seccomp + Landlock
// TCP rules). In proxy mode the only way out is the proxy ports, served here by the test's
// stand-in proxy (sandbox_test_support.h).
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
  // A spec per confined network mode, each traced: every escape below must fail in both.
  template <typename Body>
  void in_each_confined_mode(Body body) {
    for (NetworkMode mode : {NetworkMode::kOff, NetworkMode::kProxy}) {
      SCOPED_TRACE("network " + std::string(to_string(mode)));
      SpecOptions options;
      options.network = mode;
      body(make_spec(ws_, options));
    }
  }
  ScratchDir dir_;
  std::string ws_;
};

std::string unique_name(const std::string& what) {
  return "codexd-test-" + what + "-" + std::to_string(::getpid());
}

TEST_P(NetworkEscape, NoTcpOverIpv4OrIpv6) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  HostListener tcp4(ListenerKind::kTcp4);
  ASSERT_TRUE(tcp4.ready()) << tcp4.error();
  HostListener tcp6(ListenerKind::kTcp6);
  in_each_confined_mode([&](const SandboxSpec& spec) {
    int before = tcp4.served();
    expect_blocked(*manager, spec, ws_, {"tcp4", "127.0.0.1", std::to_string(tcp4.port())});
    EXPECT_EQ(tcp4.served(), before + 1) << "only the control may have reached the listener";
    if (!tcp6.ready()) return;
    before = tcp6.served();
    expect_blocked(*manager, spec, ws_, {"tcp6", "::1", std::to_string(tcp6.port())});
    EXPECT_EQ(tcp6.served(), before + 1);
  });
  if (!tcp6.ready()) GTEST_SKIP() << "IPv4 checked; no IPv6 loopback on this host: " << tcp6.error();
}

TEST_P(NetworkEscape, NoUdpAndNoDns) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  HostListener udp(ListenerKind::kUdp4);
  ASSERT_TRUE(udp.ready()) << udp.error();
  HostListener dns(ListenerKind::kDns);
  ASSERT_TRUE(dns.ready()) << dns.error();
  in_each_confined_mode([&](const SandboxSpec& spec) {
    int before = udp.served();
    expect_blocked(*manager, spec, ws_, {"udp4", "127.0.0.1", std::to_string(udp.port())});
    EXPECT_EQ(udp.served(), before + 1);
    before = dns.served();
    expect_blocked(*manager, spec, ws_, {"dns", "127.0.0.1", std::to_string(dns.port())});
    EXPECT_EQ(dns.served(), before + 1);
  });
}

TEST_P(NetworkEscape, NoAbstractUnixSocket) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  std::string name = unique_name("abstract");
  HostListener listener(ListenerKind::kAbstract, name);
  ASSERT_TRUE(listener.ready()) << listener.error();
  in_each_confined_mode([&](const SandboxSpec& spec) {
    int before = listener.served();
    expect_blocked(*manager, spec, ws_, {"abstract", name});
    EXPECT_EQ(listener.served(), before + 1);
  });
}

TEST_P(NetworkEscape, NoFilesystemUnixSocketEvenInsideTheWorkspace) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  std::string path = ws_ + "/host.sock";  // visible and writable in the sandbox view
  HostListener listener(ListenerKind::kUnixStream, path);
  ASSERT_TRUE(listener.ready()) << listener.error();
  in_each_confined_mode([&](const SandboxSpec& spec) {
    int before = listener.served();
    expect_blocked(*manager, spec, ws_, {"unix-stream", path});
    EXPECT_EQ(listener.served(), before + 1);
  });
}

TEST_P(NetworkEscape, NoDatagramToAHostUnixSocket) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  std::string path = ws_ + "/host-dgram.sock";
  HostDatagramSink sink(path);
  ASSERT_TRUE(sink.ready());
  // Codex 0.169 lets sendmsg through; every variant must fail here, in both modes.
  in_each_confined_mode([&](const SandboxSpec& spec) {
    for (const char* how : {"sendto", "sendmsg", "socketpair"}) {
      RunResult run = run_probe_sandboxed(*manager, spec, ws_, {"unix-dgram", path, how});
      EXPECT_FALSE(run.succeeded()) << how << ": " << run.describe();
      EXPECT_EQ(sink.received(), 0) << how << " reached the host socket";
      RunResult control = run_probe_unsandboxed(ws_, {"unix-dgram", path, how});
      EXPECT_TRUE(control.succeeded()) << how << ": " << control.describe();
      EXPECT_EQ(sink.received(), 1) << how;
    }
  });
}

TEST_P(NetworkEscape, SocketpairsKeepWorking) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  in_each_confined_mode([&](const SandboxSpec& spec) { expect_allowed(*manager, spec, ws_, {"socketpair-send"}); });
}

TEST_P(NetworkEscape, HostNetworkReachesTheHost) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SpecOptions options;
  options.network = NetworkMode::kHost;
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
  for (NetworkMode network : {NetworkMode::kOff, NetworkMode::kProxy, NetworkMode::kHost}) {
    SpecOptions options;
    options.network = network;
    options.masked = {socket_dir};
    SandboxSpec spec = make_spec(ws_, options);
    SCOPED_TRACE("network " + std::string(to_string(network)));
    expect_blocked(*manager, spec, ws_, {"unix-stream", socket_path});
    RunResult read = run_probe_sandboxed(*manager, spec, ws_, {"read", token});
    EXPECT_FALSE(read.succeeded()) << read.describe();
    EXPECT_EQ(read.output.find("daemon-token"), std::string::npos);
  }
  EXPECT_EQ(daemon.served(), 3) << "only the three controls may have connected";
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
  options.network = NetworkMode::kHost;
  options.masked = {socket_dir};
  SandboxSpec spec = make_spec(ws_, options);
  expect_blocked(*manager, spec, ws_, {"unix-stream", socket_path});
  expect_blocked(*manager, spec, ws_, {"write", socket_dir + "/planted"},
                 [&] { EXPECT_FALSE(path_exists(socket_dir + "/planted")); },
                 {"write", ws_ + "/control-planted"});
  EXPECT_EQ(daemon.served(), 1);
}

// Proxy mode: the proxy ports answer, netlink is gone, descriptor 3 never reaches the command.
TEST_P(NetworkEscape, ProxyModeReachesOnlyTheProxyPorts) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SpecOptions options;
  options.network = NetworkMode::kProxy;
  SandboxSpec spec = make_spec(ws_, options);
  RunResult run = run_probe_sandboxed(*manager, spec, ws_, {"proxy-ping"});
  EXPECT_TRUE(run.succeeded()) << run.describe();
  EXPECT_EQ(run.proxy_connections, 2) << "HTTP and SOCKS port each answered once: " << run.describe();
  EXPECT_EQ(run.proxy_message.rfind("codexd-sandbox/1 http=", 0), 0u) << run.proxy_message;
  if (GetParam() == TestBackend::kBwrap) {
    EXPECT_EQ(run.proxy_message, "codexd-sandbox/1 http=3128 socks=1080");
  }

  expect_blocked(*manager, spec, ws_, {"netlink-links"});
  RunResult fd3 = run_probe_sandboxed(*manager, spec, ws_, {"fd-open", "3"});
  EXPECT_FALSE(fd3.succeeded()) << "the proxy channel reached the command: " << fd3.describe();
  // The command cannot listen on the proxy port itself (the helper's socket holds it; bwrap).
  if (GetParam() == TestBackend::kBwrap) {
    RunResult bind = run_probe_sandboxed(*manager, spec, ws_, {"tcp4-listen", "3128"});
    EXPECT_FALSE(bind.succeeded()) << bind.describe();
  }
}

TEST_P(NetworkEscape, ProxyModeSetsTheProxyEnvironmentOverTheCallers) {
  CODEXD_MANAGER_OR_SKIP(manager, GetParam());
  SpecOptions options;
  options.network = NetworkMode::kProxy;
  LaunchPlan plan = make_plan(*manager, make_spec(ws_, options), {probe_path(), "env", "https_proxy"}, ws_,
                              {"PATH=/usr/bin:/bin", "https_proxy=http://attacker.example:1"});
  RunResult run = run_plan(plan);
  EXPECT_TRUE(run.succeeded()) << run.describe();
  EXPECT_NE(run.output.find("ENV https_proxy=http://127.0.0.1:"), std::string::npos) << run.describe();
  EXPECT_EQ(run.output.find("attacker"), std::string::npos) << run.describe();
}

CODEXD_INSTANTIATE_BOTH_BACKENDS(NetworkEscape);

}  // namespace
}  // namespace codexd::sandbox::testing
