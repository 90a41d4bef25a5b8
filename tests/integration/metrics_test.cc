// The Prometheus endpoint ([metrics] listen) of a real daemon, scraped with curl and parsed by
// the reference parser (Debian's python3-prometheus-client): the families say what the daemon
// did, the socket is its owner's only, and a hostile client does not stop the next scrape.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "base/unique_fd.h"
#include "codexd/v1/approvals.grpc.pb.h"
#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

using ::testing::HasSubstr;

// name{label="v",...} -> value, from the reference parser (which fails on malformed text).
constexpr const char* kParser = R"(
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        labels = ",".join('%s="%s"' % (k, v) for k, v in sorted(s.labels.items()))
        out[s.name + ("{" + labels + "}" if labels else "")] = s.value
print(json.dumps(out))
)";

class Metrics : public ::testing::Test {
 protected:
  static TestDaemonOptions options(const std::string& socket) {
    TestDaemonOptions o;  // workspace-write: commands run sandboxed
    o.extra_config = "[metrics]\nlisten = \"unix:" + socket + "\"\n";
    return o;
  }

  std::map<std::string, double> scrape() {
    ProcessResult got = run_process({"/usr/bin/curl", "-sS", "--fail", "--max-time", "20", "--unix-socket", socket_,
                                     "http://localhost/metrics"});
    EXPECT_EQ(got.exit_code, 0) << got.err;
    // Debian's interpreter: the python3-* packages are installed for it, not for another first on PATH.
    ProcessResult parsed = run_process({"/usr/bin/python3", "-c", kParser}, got.out);
    EXPECT_EQ(parsed.exit_code, 0) << "the reference parser rejects the exposition:\n" << parsed.err << "\n" << got.out;
    std::map<std::string, double> samples;
    auto json = nlohmann::json::parse(parsed.out, nullptr, false);
    if (json.is_object()) {
      for (const auto& [name, value] : json.items()) samples[name] = value.get<double>();
    }
    return samples;
  }

  TempDir dir_{"codexd-metrics", TempLocation::kOutsideTmp};
  std::string socket_ = dir_.sub("metrics.sock");
  TestDaemon daemon_{options(socket_)};
};

TEST_F(Metrics, AScrapeSaysWhatTheDaemonDid) {
  ASSERT_TRUE(daemon_.started()) << daemon_.daemon_log();
  auto stub = v1::Exec::NewStub(daemon_.channel());
  auto echoed = exec_command(*stub, argv_request(daemon_, {"/bin/echo", "metrics-test"}));
  ASSERT_TRUE(echoed.status.ok()) << describe(echoed.status);
  ASSERT_TRUE(echoed.result.has_exit_code()) << echoed.result.text();
  auto forbidden = exec_command(*stub, argv_request(daemon_, {"rm", "-rf", "/"}));
  ASSERT_TRUE(forbidden.status.ok());
  ASSERT_EQ(forbidden.result.rejection().reason(), v1::Rejection::FORBIDDEN_BY_POLICY);
  {
    // A frame sequence the HTTP/2 guard refuses (CONTINUATION with no header block open).
    UniqueFd bad(connect_unix(daemon_.socket_path()));
    ASSERT_TRUE(bad);
    const std::string bytes = std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + std::string("\0\0\0\x09\x04\0\0\0\x01", 9);
    ASSERT_EQ(::send(bad.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
    char buf[256];
    while (::recv(bad.get(), buf, sizeof buf, 0) > 0) {
    }
  }

  auto m = scrape();
  EXPECT_EQ(m["codexd_client_connections_refused_total"], 1);
  EXPECT_GE(m["codexd_client_connections"], 1) << "this test's own channel";
  ASSERT_FALSE(m.empty());
  EXPECT_EQ(m["codexd_commands_total{decision=\"forbidden_by_policy\",outcome=\"rejected\"}"], 1);
  EXPECT_EQ(m["codexd_commands_total{decision=\"none\",outcome=\"success\"}"], 1);
  EXPECT_GE(m["codexd_sessions_started_total"], 1);
  EXPECT_GE(m["codexd_session_output_bytes_total"], std::string("metrics-test\n").size());
  const std::string sandbox = echoed.result.sandbox() == v1::SANDBOX_LINUX_BWRAP      ? "linux-bwrap"
                              : echoed.result.sandbox() == v1::SANDBOX_LINUX_LANDLOCK ? "linux-landlock"
                                                                                      : "none";
  EXPECT_EQ(m["codexd_command_launch_seconds_count{sandbox=\"" + sandbox + "\"}"], 1) << "one launch: the echo";
  EXPECT_EQ(m["codexd_command_launch_seconds_bucket{le=\"+Inf\",sandbox=\"" + sandbox + "\"}"], 1);
  EXPECT_EQ(m["codexd_approvals_pending"], 0);
  EXPECT_GT(m["codexd_policy_rules"], 0);
  EXPECT_EQ(m["codexd_policy_last_reload_failed"], 0);
  EXPECT_GT(m["codexd_process_resident_memory_bytes"], 1e6);
  EXPECT_GT(m["codexd_process_open_fds"], 3);
  EXPECT_GT(m["codexd_process_threads"], 1);
  EXPECT_EQ(m.count("codexd_build_info{mode=\"user\",version=\"" + std::string(CODEXD_TEST_VERSION) + "\"}"), 1u);
  EXPECT_THAT(daemon_.daemon_log(), HasSubstr("metrics: serving GET /metrics on unix:" + socket_));
  stub.reset();
}

TEST_F(Metrics, TheSocketIsTheOwnersAndOtherPathsAndMethodsAreRefused) {
  ASSERT_TRUE(daemon_.started()) << daemon_.daemon_log();
  struct stat st {};
  ASSERT_EQ(::stat(socket_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto status_of = [&](const std::vector<std::string>& extra, const std::string& path) {
    std::vector<std::string> argv = {"/usr/bin/curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "20",
                                     "--unix-socket", socket_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back("http://localhost" + path);
    return run_process(argv).out;
  };
  EXPECT_EQ(status_of({}, "/metrics"), "200");
  EXPECT_EQ(status_of({}, "/"), "404");
  EXPECT_EQ(status_of({"-X", "POST"}, "/metrics"), "405");
  EXPECT_EQ(status_of({"-I"}, "/metrics"), "200");
}

// Garbage, a stalled half request and a flood of idle connections: each is closed or bounded,
// and a scrape after them is answered.
TEST_F(Metrics, HostileClientsDoNotStopTheNextScrape) {
  ASSERT_TRUE(daemon_.started()) << daemon_.daemon_log();
  {
    UniqueFd garbage(connect_unix(socket_));
    ASSERT_TRUE(garbage);
    const std::string junk = std::string(20000, 'A') + "\r\n\r\n";  // no request line, headers past the limit
    (void)!::send(garbage.get(), junk.data(), junk.size(), MSG_NOSIGNAL);
    char buf[64];
    EXPECT_LE(::recv(garbage.get(), buf, sizeof buf, 0), 0) << "closed without an answer";
  }
  std::vector<UniqueFd> idle;
  for (int i = 0; i < 10; ++i) idle.emplace_back(connect_unix(socket_));
  idle.clear();  // they go; the endpoint notices each close
  auto m = scrape();
  EXPECT_GT(m["codexd_process_threads"], 1);
  auto stub = v1::Exec::NewStub(daemon_.channel());
  EXPECT_TRUE(exec_command(*stub, argv_request(daemon_, {"/bin/true"})).status.ok()) << "the daemon still serves";
}

// Streaming calls that their clients cancel at any moment (before the first event, after one,
// after a few; a write may be in flight) all end: the live-stream gauges fall back to zero and
// the daemon then stops at once. A reactor that lost a cancel raced by its own write's completion
// stayed forever, and gRPC's shutdown waited for it (a stop that hung past its deadline).
TEST_F(Metrics, CancelledStreamsAllEnd) {
  ASSERT_TRUE(daemon_.started()) << daemon_.daemon_log();
  auto stub = v1::Exec::NewStub(daemon_.channel());
  // A few messages' worth of output, then silence: a lost cancel would never be noticed by a
  // later write.
  auto burst = exec_command(*stub, argv_request(daemon_, {"/bin/sh", "-c", "head -c 600000 /dev/zero; exec sleep 1000"}, 250));
  ASSERT_TRUE(burst.status.ok() && burst.result.has_session_id()) << describe(burst.status) << burst.result.text();
  for (int i = 0; i < 300; ++i) {
    grpc::ClientContext context;
    v1::AttachRequest request;
    request.set_session_id(burst.result.session_id());
    request.set_from_offset(0);
    request.set_lossless(i % 2 == 0);
    auto reader = stub->Attach(&context, request);
    v1::OutputEvent event;
    for (int read = 0; read < i % 4 && reader->Read(&event); ++read) {
    }
    context.TryCancel();
    reader->Finish();
  }
  auto approvals = v1::Approvals::NewStub(daemon_.channel());
  for (int i = 0; i < 50; ++i) {
    grpc::ClientContext context;
    auto reader = approvals->WatchApprovals(&context, v1::WatchApprovalsRequest());
    context.TryCancel();
    reader->Finish();
  }
  // The reactors end on the daemon's core thread after the clients' cancels arrive: no event
  // reaches this process, so the gauge is read until it settles (bounded).
  std::map<std::string, double> m;
  EXPECT_TRUE(eventually([&] {
    m = scrape();
    return m["codexd_streams_live{method=\"Attach\"}"] == 0 && m["codexd_streams_live{method=\"WatchApprovals\"}"] == 0;
  }, 100)) << "Attach " << m["codexd_streams_live{method=\"Attach\"}"] << ", WatchApprovals "
           << m["codexd_streams_live{method=\"WatchApprovals\"}"];
  ASSERT_TRUE(cancel(*stub, burst.result.session_id(), v1::CancelRequest::KILL).ok());
  stub.reset();
  approvals.reset();
  EXPECT_EQ(daemon_.stop(), 0) << daemon_.daemon_log();
}

// The loopback TCP form, on a port the kernel just handed out (bound and released here; the
// daemon binds it a moment later).
TEST(MetricsTcp, ServesOnALoopbackPort) {
  UniqueFd probe(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(probe.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(::getsockname(probe.get(), reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string port = std::to_string(ntohs(address.sin_port));
  probe.reset();
  TestDaemonOptions options = unsandboxed();
  options.extra_config = "[metrics]\nlisten = \"tcp:127.0.0.1:" + port + "\"\n";
  TestDaemon daemon(options);
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  ProcessResult got = run_process({"/usr/bin/curl", "-sS", "--fail", "--max-time", "20", "http://127.0.0.1:" + port + "/metrics"});
  EXPECT_EQ(got.exit_code, 0) << got.err;
  EXPECT_THAT(got.out, HasSubstr("\ncodexd_sessions_live 0\n"));
  EXPECT_EQ(daemon.stop(), 0) << daemon.daemon_log();
}

}  // namespace
}  // namespace codexd::testing
