#include "platform/sandbox/format.h"

#include <gtest/gtest.h>

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
  CapabilityReport report;
  report.chosen = Backend::kLinuxLandlock;
  report.landlock_abi = 7;
  report.warnings = {"bwrap not found"};
  std::string text = format_capability_report(report);
  EXPECT_NE(text.find("chosen backend: linux-landlock"), std::string::npos) << text;
  EXPECT_NE(text.find("landlock ABI: 7"), std::string::npos);
  EXPECT_NE(text.find("bwrap not found"), std::string::npos);
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
}

}  // namespace
}  // namespace codexd::sandbox
