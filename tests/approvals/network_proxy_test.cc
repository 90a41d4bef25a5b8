// Network mode proxy over a real daemon: real sandboxed commands (curl) reach a loopback test
// origin only through codexd's proxy, and what the proxy lets through is decided by the
// config lists, network_rule()s in the rules and network approvals answered by a reviewer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/approvals/approvals_test_util.h"
#include "tests/support/fs_wait.h"
#include "tests/support/loopback_origin.h"

namespace codexd::testing::approvals {
namespace {

using ::testing::HasSubstr;

TestDaemonOptions proxy_daemon(const std::string& network_table, const std::string& rules = "",
                               const std::string& approval_policy = "on-request") {
  TestDaemonOptions o;
  o.sandbox_mode = sandbox_mode_with("workspace-write", "network = \"proxy\"");
  o.extra_config = network_table;
  o.rules = rules;
  o.approval_policy = approval_policy;
  return o;
}

// curl through the sandbox's proxy environment; prints the status code last.
v1::RunCommandRequest curl(const std::string& workdir, const std::string& url, const std::string& extra = "") {
  v1::RunCommandRequest req;
  req.add_argv("/bin/sh");
  req.add_argv("-c");
  req.add_argv("curl -sS --max-time 30 " + extra + " -w '\\nstatus=%{http_code}\\n' '" + url + "'");
  req.set_workdir(workdir);
  req.set_timeout_ms(60000);
  return req;
}

std::string output_of(const v1::RunCommandResponse& r) { return r.text(); }

std::vector<nlohmann::json> network_audit_lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::istringstream in(slurp(path));
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("tool", "") == "network") out.push_back(j);
  }
  return out;
}

// The proxy writes a connection's audit line when the connection object goes, which can be
// after the command's result reached the client: waits (inotify) until `count` are there.
std::vector<nlohmann::json> network_audit_lines_once(const std::string& path, size_t count) {
  std::vector<nlohmann::json> lines;
  wait_for_dir_change(std::filesystem::path(path).parent_path().string(),
                      [&] { return (lines = network_audit_lines(path)).size() >= count; });
  return lines;
}

class NetworkProxy : public DaemonTest {
 protected:
  explicit NetworkProxy(TestDaemonOptions o) : DaemonTest(std::move(o)) {}
  void SetUp() override {
    DaemonTest::SetUp();
    ASSERT_TRUE(origin_.ready());
  }
  v1::RunCommandResponse run_ok(const v1::RunCommandRequest& req) {
    v1::RunCommandResponse res;
    grpc::Status st = agent_.run(req, &res);
    EXPECT_TRUE(st.ok()) << st.error_message();
    EXPECT_FALSE(res.has_rejection()) << res.rejection().message();
    return res;
  }
  LoopbackOrigin origin_;
  Client agent_{daemon_, "net-agent"};
};

class NetworkProxyAllowList : public NetworkProxy {
 protected:
  NetworkProxyAllowList()
      : NetworkProxy(proxy_daemon("[network]\nallow = [\"127.0.0.2\", \"*.codexd.test\"]\ndeny = [\"blocked.codexd.test\"]\n")) {}
};

TEST_F(NetworkProxyAllowList, AnAllowedHostIsReachedThroughTheProxyAndAudited) {
  v1::RunCommandResponse r = run_ok(curl(ws(), origin_.url("/hello")));
  EXPECT_THAT(output_of(r), HasSubstr(LoopbackOrigin::kBody));
  EXPECT_THAT(output_of(r), HasSubstr("status=200"));
  EXPECT_EQ(origin_.served(), 1);
  // The command's own connection went to the proxy port; the origin saw the daemon.
  auto lines = network_audit_lines_once(daemon_.audit_log_path(), 1);
  ASSERT_EQ(lines.size(), 1u) << slurp(daemon_.audit_log_path());
  EXPECT_EQ(lines[0]["host"], "127.0.0.2");
  EXPECT_EQ(lines[0]["port"], origin_.port());
  EXPECT_EQ(lines[0]["protocol"], "http");
  EXPECT_EQ(lines[0]["decision"], "allowed");
  EXPECT_EQ(lines[0]["agent_id"], "net-agent");
  EXPECT_GT(lines[0]["bytes_down"].get<uint64_t>(), std::string(LoopbackOrigin::kBody).size());
  EXPECT_EQ(slurp(daemon_.audit_log_path()).find("/hello"), std::string::npos) << "the path must never be logged";
}

TEST_F(NetworkProxyAllowList, ADeniedHostGetsA403ThatSaysWhy) {
  v1::RunCommandResponse r = run_ok(curl(ws(), "http://blocked.codexd.test/"));
  EXPECT_THAT(output_of(r), HasSubstr("status=403"));
  EXPECT_THAT(output_of(r), HasSubstr("blocked.codexd.test"));
  EXPECT_THAT(output_of(r), HasSubstr("[network] deny"));
  auto lines = network_audit_lines_once(daemon_.audit_log_path(), 1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["decision"], "denied");
}

TEST_F(NetworkProxyAllowList, TheHostLoopbackIsUnreachableWithoutTheProxy) {
  v1::RunCommandResponse r = run_ok(curl(ws(), origin_.url("/direct"), "--noproxy '*'"));
  EXPECT_THAT(output_of(r), HasSubstr("status=000"));
  EXPECT_EQ(origin_.served(), 0);
}

// The proxy environment is what makes real tools use the proxy without flags: each of them,
// pointed at the origin (which answers every request with a plain text body, so the tools
// themselves fail afterwards), must reach it. Direct, 127.0.0.2 is unreachable in the sandbox.
struct ToolCase {
  const char* name;
  const char* executable;
  std::string script;  // %URL% is the origin's URL
};

TEST_F(NetworkProxyAllowList, NpmPipAndGitHonourTheProxyEnvironment) {
  const std::vector<ToolCase> tools = {
      {"npm", "/usr/bin/npm",
       "npm_config_cache=$PWD/.npm npm view left-pad --registry %URL% --fetch-retries=0 --fetch-timeout=20000"},
      {"pip", "/usr/bin/pip3",
       "PIP_NO_CACHE_DIR=1 /usr/bin/pip3 download --no-deps --retries 0 --timeout 20 -d $PWD/dl "
       "--index-url %URL%simple/ left-pad"},
      {"git", "/usr/bin/git", "HOME=$PWD git ls-remote %URL%repo.git"},
  };
  std::string skipped;
  for (const ToolCase& tool : tools) {
    SCOPED_TRACE(tool.name);
    if (!exists(tool.executable)) {
      skipped += std::string(" ") + tool.name;
      continue;
    }
    std::string script = tool.script;
    script.replace(script.find("%URL%"), 5, origin_.url("/"));
    const int before = origin_.served();
    v1::RunCommandRequest req;
    for (const char* a : {"/bin/sh", "-c"}) req.add_argv(a);
    req.add_argv(script);
    req.set_workdir(ws());
    req.set_timeout_ms(90000);
    v1::RunCommandResponse r = run_ok(req);
    EXPECT_GT(origin_.served(), before) << tool.name << " did not reach the origin through the proxy: " << r.text();
  }
  if (!skipped.empty()) GTEST_SKIP() << "not installed here:" << skipped;
}

class NetworkProxyWildcard : public NetworkProxy {
 protected:
  NetworkProxyWildcard() : NetworkProxy(proxy_daemon("[network]\nallow = [\"*\"]\n")) {}
};

TEST_F(NetworkProxyWildcard, LoopbackNeedsARuleThatNamesItExactly) {
  // "*" allows every name, but 127.0.0.2 and localhost are loopback: only an exact rule may
  // reach them, so DNS rebinding through an allowed name cannot reach host services.
  v1::RunCommandResponse by_ip = run_ok(curl(ws(), origin_.url("/")));
  EXPECT_THAT(output_of(by_ip), HasSubstr("status=403"));
  EXPECT_THAT(output_of(by_ip), HasSubstr("loopback"));
  v1::RunCommandResponse by_name = run_ok(curl(ws(), "http://localhost:" + std::to_string(origin_.port()) + "/",
                                               "--noproxy '' -x \"$http_proxy\""));
  EXPECT_THAT(output_of(by_name), HasSubstr("status=403"));
  EXPECT_THAT(output_of(by_name), HasSubstr("loopback"));
  EXPECT_EQ(origin_.served(), 0);
}

class NetworkProxyRules : public NetworkProxy {
 protected:
  NetworkProxyRules()
      : NetworkProxy(proxy_daemon("[network]\nallow = [\"forbidden-by-rule.codexd.test\"]\n",
                                  "network_rule(host=\"127.0.0.2\", protocol=\"http\", decision=\"allow\")\n"
                                  "network_rule(host=\"forbidden-by-rule.codexd.test\", protocol=\"http\", "
                                  "decision=\"forbidden\", justification=\"no exfiltration\")\n")) {}
};

TEST_F(NetworkProxyRules, NetworkRulesDecideAndTheStrictestWins) {
  v1::RunCommandResponse allowed = run_ok(curl(ws(), origin_.url("/")));
  EXPECT_THAT(output_of(allowed), HasSubstr(LoopbackOrigin::kBody));
  // The config allows it, the rule forbids it: forbidden.
  v1::RunCommandResponse forbidden = run_ok(curl(ws(), "http://forbidden-by-rule.codexd.test/"));
  EXPECT_THAT(output_of(forbidden), HasSubstr("status=403"));
  EXPECT_THAT(output_of(forbidden), HasSubstr("no exfiltration"));
}

// [agents."x"] network_limited: only that agent's plain HTTP is limited to GET/HEAD/OPTIONS.
class NetworkProxyAgentLimited : public NetworkProxy {
 protected:
  NetworkProxyAgentLimited()
      : NetworkProxy(proxy_daemon("[network]\nallow = [\"127.0.0.2\"]\n[agents.\"net-agent\"]\nnetwork_limited = true\n")) {}
};

TEST_F(NetworkProxyAgentLimited, OnlyTheLimitedAgentIsRefusedAPost) {
  v1::RunCommandResponse get = run_ok(curl(ws(), origin_.url("/get")));
  EXPECT_THAT(output_of(get), HasSubstr("status=200"));
  v1::RunCommandResponse post = run_ok(curl(ws(), origin_.url("/post"), "-X POST -d x=1"));
  EXPECT_THAT(output_of(post), HasSubstr("status=403"));
  EXPECT_THAT(output_of(post), HasSubstr("limited network access"));
  EXPECT_EQ(origin_.served(), 1) << "the POST reached the origin";

  Client free_agent{daemon_, "free-agent"};
  v1::RunCommandResponse other;
  ASSERT_TRUE(free_agent.run(curl(ws(), origin_.url("/post"), "-X POST -d x=1"), &other).ok());
  EXPECT_THAT(output_of(other), HasSubstr("status=200")) << "another agent is not limited";
  EXPECT_EQ(origin_.served(), 2);
}

// The Landlock backend has no network namespace: the helper's proxy ports are ephemeral ports
// on the host's loopback and Landlock lets the command connect only to them.
class NetworkProxyLandlock : public NetworkProxy {
 protected:
  static TestDaemonOptions options() {
    TestDaemonOptions o = proxy_daemon("[network]\nallow = [\"127.0.0.2\"]\n");
    o.sandbox_mode = sandbox_mode_with("workspace-write", "network = \"proxy\"\nbackend = \"landlock\"");
    return o;
  }
  NetworkProxyLandlock() : NetworkProxy(options()) {}
};

TEST_F(NetworkProxyLandlock, TheSameProxyWithoutANetworkNamespace) {
  v1::RunCommandResponse r = run_ok(curl(ws(), origin_.url("/landlock")));
  if (r.text().find("Landlock ABI 4") != std::string::npos) GTEST_SKIP() << "kernel without Landlock TCP rules: " << r.text();
  EXPECT_THAT(r.text(), HasSubstr(LoopbackOrigin::kBody));
  EXPECT_EQ(r.sandbox(), v1::SANDBOX_LINUX_LANDLOCK);
  // Direct, the origin is on the host's loopback and Landlock refuses the connect.
  v1::RunCommandResponse direct = run_ok(curl(ws(), origin_.url("/direct"), "--noproxy '*'"));
  EXPECT_THAT(direct.text(), HasSubstr("status=000"));
  EXPECT_EQ(origin_.served(), 1);
}

class NetworkApprovals : public NetworkProxy {
 protected:
  NetworkApprovals() : NetworkProxy(proxy_daemon("")) {}
  // Starts curl, waits for its network approval, answers it, returns the command's result.
  v1::RunCommandResponse answer_with(v1::ReviewDecision decision, v1::ApprovalRequest* asked = nullptr) {
    Reviewer reviewer(daemon_);
    reviewer.synced();
    auto call = run_async(agent_, curl(ws(), origin_.url("/")));
    v1::ApprovalRequest request = reviewer.added();
    if (asked) *asked = request;
    EXPECT_TRUE(reviewer.resolve(request.approval_id(), decision).ok());
    EXPECT_TRUE(call->wait());
    return call->response();
  }
};

TEST_F(NetworkApprovals, AnUnlistedHostAsksAReviewerWhoApproves) {
  v1::ApprovalRequest asked;
  v1::RunCommandResponse r = answer_with(v1::APPROVED, &asked);
  EXPECT_EQ(asked.reason().kind(), v1::ApprovalReason::NETWORK);
  ASSERT_TRUE(asked.has_network());
  EXPECT_EQ(asked.network().host(), "127.0.0.2");
  EXPECT_EQ(asked.network().port(), static_cast<uint32_t>(origin_.port()));
  EXPECT_EQ(asked.network().protocol(), "http");
  EXPECT_EQ(asked.agent_id(), "net-agent");
  EXPECT_THAT(asked.cmd(), HasSubstr("curl"));
  EXPECT_THAT(r.text(), HasSubstr(LoopbackOrigin::kBody));
  EXPECT_EQ(origin_.served(), 1);
}

TEST_F(NetworkApprovals, AnUnlistedHostAsksAReviewerWhoDenies) {
  v1::RunCommandResponse r = answer_with(v1::DENIED);
  EXPECT_THAT(r.text(), HasSubstr("status=403"));
  EXPECT_THAT(r.text(), HasSubstr("denied by a reviewer"));
  EXPECT_EQ(origin_.served(), 0);
}

TEST_F(NetworkApprovals, RememberAppendsANetworkRuleAndTheNextRequestNeedsNoApproval) {
  v1::RunCommandResponse r = answer_with(v1::APPROVED_EXECPOLICY_AMENDMENT);
  EXPECT_THAT(r.text(), HasSubstr(LoopbackOrigin::kBody));
  EXPECT_THAT(slurp(daemon_.dir() + "/rules/amend.rules"),
              HasSubstr("network_rule(host=\"127.0.0.2\", protocol=\"http\", decision=\"allow\")"));
  // No reviewer is watching now: the remembered rule answers.
  v1::RunCommandResponse again = run_ok(curl(ws(), origin_.url("/")));
  EXPECT_THAT(again.text(), HasSubstr(LoopbackOrigin::kBody));
  EXPECT_EQ(origin_.served(), 2);
}

// approvals.timeout_ms is 0 here (wait forever): only the closed connection ends the request.
TEST_F(NetworkApprovals, APendingApprovalIsWithdrawnWhenItsConnectionCloses) {
  Reviewer reviewer(daemon_);
  reviewer.synced();
  // The command kills its curl once the test, having seen the approval, writes to the FIFO.
  const std::string fifo = ws() + "/go.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  v1::RunCommandRequest req = curl(ws(), origin_.url("/"));
  req.set_argv(2, req.argv(2) + " & c=$!; read go < ./go.fifo; kill $c; wait $c; echo curl-killed");
  auto call = run_async(agent_, req);
  v1::ApprovalRequest request = reviewer.added();
  std::ofstream(fifo) << "go" << std::endl;
  v1::ApprovalEvent::Resolved resolved = reviewer.resolved();
  EXPECT_EQ(resolved.approval_id(), request.approval_id());
  EXPECT_EQ(resolved.resolution_source(), "requester_disconnected");
  ASSERT_TRUE(call->wait());
  EXPECT_THAT(call->response().text(), HasSubstr("curl-killed"));
  grpc::Status late = reviewer.resolve(request.approval_id(), v1::APPROVED);
  EXPECT_EQ(late.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << late.error_message();
  EXPECT_EQ(origin_.served(), 0);
  auto lines = network_audit_lines_once(daemon_.audit_log_path(), 1);
  ASSERT_EQ(lines.size(), 1u) << slurp(daemon_.audit_log_path());
  // curl's FIN or the end of the command (which closes the proxy attachment) may be seen first:
  // the approval is withdrawn either way, and the audit line says why.
  EXPECT_THAT(lines[0].dump(), HasSubstr("while the decision was pending"));
}

class NetworkNever : public NetworkProxy {
 protected:
  NetworkNever() : NetworkProxy(proxy_daemon("", "", "never")) {}
};

TEST_F(NetworkNever, AnUnlistedHostIsRefusedUnderApprovalPolicyNever) {
  v1::RunCommandResponse r = run_ok(curl(ws(), origin_.url("/")));
  EXPECT_THAT(r.text(), HasSubstr("status=403"));
  EXPECT_THAT(r.text(), HasSubstr("never"));
  EXPECT_EQ(origin_.served(), 0);
}

}  // namespace
}  // namespace codexd::testing::approvals
