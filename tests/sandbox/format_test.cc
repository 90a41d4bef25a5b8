#include "platform/sandbox/format.h"

#include <gtest/gtest.h>

#include "platform/backends/manager_factory.h"
#include "platform/linux/linux_capabilities.h"

namespace codexd::sandbox {
namespace {

TEST(Names, RoundTrip) {
  for (SandboxMode mode : {SandboxMode::kReadOnly, SandboxMode::kWorkspaceWrite, SandboxMode::kDangerFullAccess}) {
    EXPECT_EQ(parse_sandbox_mode(to_string(mode)), mode);
  }
  EXPECT_FALSE(parse_sandbox_mode("workspace_write").has_value());
  EXPECT_EQ(to_string(Backend::kLinuxBwrap), "linux-bwrap");
  EXPECT_EQ(to_string(Backend::kLinuxLandlock), "linux-landlock");
  EXPECT_EQ(parse_backend_preference("landlock"), BackendPreference::kLandlock);
  EXPECT_FALSE(parse_backend_preference("seatbelt").has_value());
}

TEST(Format, PlanHidesEnvironmentValuesButShowsMarkers) {
  LaunchPlan plan;
  plan.backend = Backend::kLinuxBwrap;
  plan.argv = {"/usr/bin/bwrap", "--ro-bind", "/", "/", "--", "/bin/echo", "hi there"};
  plan.env = {"OPENAI_API_KEY=sk-secret", "CODEXD_SANDBOX=linux-bwrap", "CODEX_SANDBOX_NETWORK_DISABLED=1"};
  plan.cwd = "/work";
  plan.rules = {"writable: /work"};
  std::string text = format_launch_plan(plan);
  EXPECT_NE(text.find("--ro-bind / / \\"), std::string::npos) << text;
  EXPECT_NE(text.find("'hi there'"), std::string::npos);
  EXPECT_EQ(text.find("sk-secret"), std::string::npos);
  EXPECT_NE(text.find("OPENAI_API_KEY=..."), std::string::npos);
  EXPECT_NE(text.find("CODEXD_SANDBOX=linux-bwrap"), std::string::npos);
  EXPECT_NE(text.find("writable: /work"), std::string::npos);
}

TEST(Format, CapabilityReportMentionsEverything) {
  linux_backend::LinuxCapabilities caps;
  caps.landlock_abi = 7;
  caps.seccomp_available = true;
  CapabilityReport report;
  report.chosen = Backend::kLinuxLandlock;
  report.facts = linux_backend::capability_facts(caps);
  report.helper_path = "/usr/libexec/codexd-sandbox-helper";
  report.warnings = {"bwrap not found"};
  std::string text = format_capability_report(report);
  EXPECT_NE(text.find("chosen backend: linux-landlock"), std::string::npos) << text;
  EXPECT_NE(text.find("landlock ABI: 7"), std::string::npos);
  EXPECT_NE(text.find("bwrap not found"), std::string::npos);
  // The lines (and their order) the report has always had.
  EXPECT_EQ(text,
            "chosen backend: linux-landlock\n"
            "bwrap: (not found)\n"
            "bwrap optional flags: (none)\n"
            "unprivileged user namespaces: not usable\n"
            "fresh /proc in sandbox: no (fallback)\n"
            "landlock ABI: 7\n"
            "seccomp: available\n"
            "exec supervision: not available (needs Linux 5.6)\n"
            "helper: /usr/libexec/codexd-sandbox-helper (not usable)\n"
            "probe time: 0 ms\n"
            "warnings:\n"
            "  bwrap not found\n");
}

TEST(UnavailableManager, RefusesEverythingButDangerFullAccess) {
  std::unique_ptr<SandboxManager> manager = create_unavailable_sandbox_manager();
  EXPECT_EQ(manager->capabilities().chosen, Backend::kNone);
  SandboxSpec spec;
  spec.mode = SandboxMode::kReadOnly;
  LaunchRequest request{{"/bin/true"}, "/", {}};
  Result<LaunchPlan> plan = manager->plan(spec, request);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnavailable);
  spec.mode = SandboxMode::kDangerFullAccess;
  plan = manager->plan(spec, request);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->argv, request.argv);
  EXPECT_EQ(plan->backend, Backend::kNone);
  EXPECT_EQ(plan->executable, "/bin/true");
}

// The pipeline every manager shares (SandboxManager::plan / plan_unconfined).
TEST(UnavailableManager, PlanUnconfinedResolvesArgv0InTheChildPath) {
  std::unique_ptr<SandboxManager> manager = create_unavailable_sandbox_manager();
  Result<LaunchPlan> plan = manager->plan_unconfined({{"sh", "-c", "true"}, "/", {"PATH=/nonexistent:/bin", "A=1"}});
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_EQ(plan->backend, Backend::kNone);
  EXPECT_EQ(plan->executable, "/bin/sh");
  EXPECT_EQ(plan->argv, (std::vector<std::string>{"sh", "-c", "true"}));
  EXPECT_EQ(plan->env, (std::vector<std::string>{"PATH=/nonexistent:/bin", "A=1"}));
  EXPECT_EQ(plan->cwd, "/");
  EXPECT_TRUE(plan->rules.empty());

  Result<LaunchPlan> missing = manager->plan_unconfined({{"no-such-command-xyz"}, "/", {"PATH=/bin"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "command not found: no-such-command-xyz");
}

TEST(UnavailableManager, EveryPlanValidatesTheRequestFirst) {
  std::unique_ptr<SandboxManager> manager = create_unavailable_sandbox_manager();
  SandboxSpec danger;
  danger.mode = SandboxMode::kDangerFullAccess;
  for (const LaunchRequest& bad : {LaunchRequest{{}, "/", {}}, LaunchRequest{{""}, "/", {}},
                                   LaunchRequest{{"echo", std::string("a\0b", 3)}, "/", {}},
                                   LaunchRequest{{"/bin/true"}, "relative", {}}}) {
    EXPECT_EQ(manager->plan(danger, bad).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(manager->plan_unconfined(bad).status().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace codexd::sandbox
