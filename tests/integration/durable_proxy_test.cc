// A sandboxed session in network mode proxy keeps its proxy across a daemon restart: its shim
// holds the sandbox's listening proxy ports and hands them to the next daemon, which serves
// them again with the session's owner. Without that, the command's requests after a crash or
// a planned restart found no listener.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"
#include "tests/support/loopback_origin.h"

namespace codexd::testing {
namespace {

using ::testing::HasSubstr;

TestDaemonOptions proxy_daemon() {
  TestDaemonOptions o;  // workspace-write: the real sandbox
  o.sandbox_config = "network = \"proxy\"";
  o.extra_config = "[network]\nallow = [\"127.0.0.2\"]\n";
  return o;
}

// One request through the sandbox's proxy (its environment points curl there) per line
// written to the fifo `go`; prints the status of each.
std::string requester(const LoopbackOrigin& origin) {
  return "while read x < go; do curl -sS --max-time 20 -o /dev/null -w 'status=%{http_code}\\n' '" + origin.url("/again") +
         "' 2>&1; done";
}

bool has_status_line(const std::string& output) {
  const auto at = output.find("status=");
  return at != std::string::npos && output.find('\n', at) != std::string::npos;
}

std::vector<nlohmann::json> network_audit_lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::istringstream in(read_text_file(path));
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("tool", "") == "network") out.push_back(j);
  }
  return out;
}

// A request before the daemon goes (`go_away`) and one after the next daemon adopted the
// session: both reach the origin through the proxy, the second on behalf of the same owner.
void keeps_its_proxy(const std::function<void(TestDaemon&)>& go_away) {
  if (::access("/usr/bin/curl", X_OK) != 0) GTEST_SKIP() << "curl is not installed";
  LoopbackOrigin origin;
  ASSERT_TRUE(origin.ready());
  TestDaemon daemon(proxy_daemon());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  Fifo go(daemon.workspace(), "go");
  auto stub = v1::Exec::NewStub(daemon.channel());
  auto started = exec_command(*stub, shell_request(daemon, requester(origin), 250));
  ASSERT_TRUE(started.status.ok()) << describe(started.status);
  if (started.result.rejection().reason() == v1::Rejection::SANDBOX_UNAVAILABLE) {
    GTEST_SKIP() << "no sandbox backend here: " << started.result.rejection().message();
  }
  ASSERT_TRUE(started.result.has_session_id()) << started.result.text() << daemon.daemon_log();
  const int id = started.result.session_id();

  go.write("before\n");
  auto before = follow(*stub, started.result, has_status_line);
  ASSERT_TRUE(before.status.ok()) << describe(before.status);
  ASSERT_THAT(started.result.output() + before.output, HasSubstr("status=200")) << daemon.daemon_log();
  ASSERT_EQ(origin.served(), 1);

  stub.reset();
  go_away(daemon);
  ASSERT_TRUE(daemon.restart()) << daemon.daemon_log();
  stub = v1::Exec::NewStub(daemon.channel());
  EXPECT_THAT(daemon.daemon_log(), ::testing::Not(HasSubstr("without its network proxy")));

  go.write("after\n");
  auto polled = poll(*stub, id, 250);
  ASSERT_TRUE(polled.status.ok()) << describe(polled.status);
  auto after = follow(*stub, polled.result, has_status_line);
  ASSERT_TRUE(after.status.ok()) << describe(after.status);
  EXPECT_THAT(polled.result.output() + after.output, HasSubstr("status=200")) << daemon.daemon_log();
  EXPECT_EQ(origin.served(), 2) << "the request after the restart did not reach the origin";

  // Both connections were decided and audited for the session's owner.
  auto lines = network_audit_lines(daemon.audit_log_path());
  ASSERT_EQ(lines.size(), 2u) << read_text_file(daemon.audit_log_path());
  for (const auto& line : lines) {
    EXPECT_EQ(line["decision"], "allowed");
    EXPECT_EQ(line["session_id"], id);
    EXPECT_EQ(line["agent_id"], lines[0]["agent_id"]);
  }
  ASSERT_TRUE(cancel(*stub, id, v1::CancelRequest::KILL).ok());
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

TEST(DurableProxy, ASessionsProxyServesAgainAfterADaemonKilledWithSigkill) {
  keeps_its_proxy([](TestDaemon& daemon) { EXPECT_EQ(daemon.crash(), 128 + SIGKILL); });
}

TEST(DurableProxy, ASessionsProxyServesAgainAfterAPlannedRestartWithSigusr1) {
  keeps_its_proxy([](TestDaemon& daemon) { EXPECT_EQ(daemon.stop_with(SIGUSR1), 0); });
}

}  // namespace
}  // namespace codexd::testing
