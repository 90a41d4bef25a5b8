// Helpers for the orchestrator unit tests: a temp directory, a stand-in sandbox backend that
// records what it was asked to wrap, and an Orchestrator wired to a real broker, cache and
// policy store on an io_context.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/orchestrator/approval_broker.h"
#include "daemon/orchestrator/approval_cache.h"
#include "daemon/orchestrator/orchestrator.h"
#include "daemon/orchestrator/policy_store.h"
#include "platform/posix/executable_path.h"
#include "platform/sandbox/sandbox.h"
#include "tests/exec/io_test_util.h"
#include "tests/support/temp_dir.h"

namespace codexd::orchestrator::test {

// The suite's scratch directory (its commands run under a fake sandbox, so /tmp will do).
struct TempDir : codexd::testing::TempDir {
  TempDir() : codexd::testing::TempDir("codexd-orch") {}
};

// Wraps commands as "/fake/bwrap -- CMD..." (or fails, like a machine without a usable
// sandbox). The orchestrator's decisions are what these tests look at; the real backends
// have their own suites and the integration tests run the real one.
class FakeSandbox : public sandbox::SandboxManager {
 public:
  FakeSandbox() { caps_.chosen = sandbox::Backend::kLinuxBwrap; }
  const sandbox::CapabilityReport& capabilities() const override { return caps_; }

  bool fail = false;
  mutable int plans = 0;  // confined plans asked for

 protected:
  Result<sandbox::LaunchPlan> plan_confined(const sandbox::SandboxSpec&, const sandbox::LaunchRequest& request) const override {
    ++plans;
    if (fail) return Unavailable("fake backend: no sandbox on this machine");
    sandbox::LaunchPlan p;
    p.backend = sandbox::Backend::kLinuxBwrap;
    p.argv = {"/fake/bwrap", "--"};
    p.argv.insert(p.argv.end(), request.argv.begin(), request.argv.end());
    p.env = request.env;
    p.cwd = request.cwd;
    p.rules = {"fake rules"};
    return p;
  }
  Result<std::string> resolve_unconfined_executable(const sandbox::LaunchRequest& request) const override {
    return posix::resolve_executable(request.argv.front(), request.env, request.cwd);
  }

 private:
  sandbox::CapabilityReport caps_;
};

// The requester reviews its own requests (the daemon's default).
class SelfReviewers : public ReviewerPolicy {
 public:
  bool may_review(uid_t reviewer, const ApprovalTicket& ticket) const override { return reviewer == ticket.requester_uid; }
};

// Test options name approval policies as the config does ("untrusted", "on-request", ...).
inline policy::ApprovalPolicyKind approval_kind(const std::string& name) {
  auto kind = policy::parse_approval_policy_kind(name);
  if (!kind) std::abort();  // a typo in a test
  return *kind;
}

struct HarnessOptions {
  std::string rules;                   // written to rules/test.rules
  std::string approval_policy = "on-request";
  std::vector<std::string> denied_read;
  std::vector<std::string> writable_roots;
  sandbox::SandboxMode mode = sandbox::SandboxMode::kWorkspaceWrite;
  BrokerOptions broker;
  size_t cache_entries = 16;
  std::map<std::string, std::string> agent_policies;  // agent id -> approval policy
};

struct Harness {
  using Options = HarnessOptions;

  explicit Harness(Options o = {}) : options(std::move(o)) {
    workspace = dir.path() + "/ws";
    std::filesystem::create_directories(workspace);
    std::filesystem::create_directories(dir.path() + "/rules");
    if (!options.rules.empty()) std::ofstream(dir.path() + "/rules/test.rules") << options.rules;
    config = config::default_config(config::DaemonMode::kUser);
    config.policy.rules_dirs = {dir.path() + "/rules"};
    config.policy.approval_policy = approval_kind(options.approval_policy);
    config.sandbox.policy.mode = options.mode;
    config.sandbox.policy.denied_read = options.denied_read;
    config.sandbox.policy.writable_roots = options.writable_roots;
    config.approvals.timeout_ms = static_cast<uint32_t>(options.broker.timeout.count());
    for (const auto& [agent, policy] : options.agent_policies) config.agents[agent].approval_policy = approval_kind(policy);
    policies = std::make_unique<PolicyStore>("", config.policy.rules_dirs);
    load = policies->reload();
    broker = std::make_unique<ApprovalBroker>(io, options.broker, std::make_shared<SelfReviewers>());
    cache = std::make_unique<ApprovalCache>(options.cache_entries);
    LaunchBuilderDeps launch_deps;
    launch_deps.config = &config;
    launch_deps.sandbox = &sandbox;
    launch_deps.base_env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"HOME", dir.path()}};
    launches = std::make_unique<LaunchBuilder>(std::move(launch_deps));
    OrchestratorDeps deps;
    deps.config = &config;
    deps.policies = policies.get();
    deps.launches = launches.get();
    deps.broker = broker.get();
    deps.cache = cache.get();
    orchestrator = std::make_unique<Orchestrator>(std::move(deps));
  }

  ExecRequest request(std::vector<std::string> argv, const std::string& agent = "agent-a") const {
    ExecRequest r;
    r.tool = Tool::kUnifiedExec;
    r.argv = std::move(argv);
    r.workdir = workspace;
    r.caller.uid = ::geteuid();
    r.caller.gid = ::getegid();
    r.caller.agent_id = agent;
    r.call_id = "call-1";
    return r;
  }

  // Admits and returns the result if it is already known (no approval pending).
  struct Admission {
    std::shared_ptr<PendingAdmission> pending;
    std::shared_ptr<std::optional<AdmitResult>> result = std::make_shared<std::optional<AdmitResult>>();
    bool done() const { return result->has_value(); }
    const AdmitResult& get() const { return **result; }
  };
  Admission admit(ExecRequest r) {
    Admission a;
    auto slot = a.result;
    a.pending = orchestrator->admit(std::move(r), [slot](AdmitResult res) { *slot = std::move(res); });
    return a;
  }
  Admission retry(std::shared_ptr<const ExecPlan> first) {
    Admission a;
    auto slot = a.result;
    a.pending = orchestrator->plan_retry(std::move(first), [slot](AdmitResult res) { *slot = std::move(res); });
    return a;
  }

  // The one pending ticket (asserting there is exactly one is up to the caller).
  std::vector<ApprovalTicket> pending() const { return broker->pending_for(::geteuid()); }
  Status answer(const std::string& id, ReviewDecision d, const std::string& rationale = "") {
    return broker->resolve(id, d, ::geteuid(), rationale);
  }

  Options options;
  TempDir dir;
  std::string workspace;
  boost::asio::io_context io;
  config::Config config;
  std::unique_ptr<PolicyStore> policies;
  ReloadResult load;
  FakeSandbox sandbox;
  std::unique_ptr<ApprovalBroker> broker;
  std::unique_ptr<ApprovalCache> cache;
  std::unique_ptr<LaunchBuilder> launches;
  std::unique_ptr<Orchestrator> orchestrator;
};

}  // namespace codexd::orchestrator::test
