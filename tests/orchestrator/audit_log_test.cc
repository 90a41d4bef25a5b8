// The decision audit log: one JSON line per record, the documented fields, a keyed call-id hash.
#include "daemon/orchestrator/audit_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/orchestrator/orchestrator_test_util.h"

namespace codexd::orchestrator {
namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

AuditRecord sample() {
  AuditRecord r;
  r.tool = "exec_command";
  r.agent_id = "agent-a";
  r.uid = 1000;
  r.turn_id = "turn-7";
  r.call_id = "call-secret-id";
  r.approval_policy = "untrusted";
  r.requirement = "needs_approval";
  r.reviewed = true;
  r.decision = "approved";
  r.sandbox_override = "none";
  r.initial_sandbox = "linux-bwrap";
  r.attempt = "first";
  r.outcome = "success";
  r.exit_code = 0;
  r.approval_wait_ms = 12.7;
  r.duration_ms = 40.2;
  return r;
}

TEST(AuditLog, OneJsonLinePerRecordWithTheDocumentedFieldsInOrder) {
  test::TempDir dir;
  const std::string path = dir.path() + "/audit.log";
  auto log = AuditLog::open(path, false);
  ASSERT_TRUE(log.ok()) << log.status().message();
  (*log)->record(sample());
  AuditRecord second = sample();
  second.exit_code.reset();
  second.outcome = "rejected";
  second.decision = "forbidden_by_policy";
  (*log)->record(second);
  (*log)->flush();

  auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), 2u);
  auto j = nlohmann::ordered_json::parse(lines[0]);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"ts", "tool", "agent_id", "uid", "turn_id", "call_id_hash", "approval_policy",
                                            "requirement", "reviewed", "decision", "sandbox_override", "initial_sandbox",
                                            "attempt", "outcome", "exit_code", "approval_wait_ms", "duration_ms"}));
  EXPECT_EQ(j["tool"], "exec_command");
  EXPECT_EQ(j["uid"], 1000);
  EXPECT_EQ(j["reviewed"], true);
  EXPECT_EQ(j["approval_wait_ms"], 12);
  EXPECT_EQ(j["exit_code"], 0);
  auto k = nlohmann::json::parse(lines[1]);
  EXPECT_FALSE(k.contains("exit_code")) << "no exit code when nothing ran";
  EXPECT_EQ(k["outcome"], "rejected");
}

TEST(AuditLog, TheCallIdIsAKeyedHashStableWithinADaemonAndDifferentAcrossDaemons) {
  test::TempDir dir;
  auto a = AuditLog::open(dir.path() + "/a.log", false);
  auto b = AuditLog::open(dir.path() + "/b.log", false);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string h = (*a)->hash_call_id("call-secret-id");
  EXPECT_EQ(h.size(), 32u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos) << h;
  EXPECT_EQ(h, (*a)->hash_call_id("call-secret-id")) << "lines of one call correlate";
  EXPECT_NE(h, (*a)->hash_call_id("call-secret-iD"));
  EXPECT_NE(h, (*b)->hash_call_id("call-secret-id")) << "another daemon's secret gives another hash";

  (*a)->record(sample());
  (*a)->flush();
  const auto lines = lines_of(dir.path() + "/a.log");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(lines[0])["call_id_hash"], h);
  EXPECT_THAT(lines[0], ::testing::Not(::testing::HasSubstr("call-secret-id")));
}

TEST(AuditLog, AnEmptyCallIdIsRecordedEmpty) {
  test::TempDir dir;
  auto log = AuditLog::open(dir.path() + "/a.log", false);
  ASSERT_TRUE(log.ok());
  AuditRecord r = sample();
  r.call_id.clear();
  (*log)->record(r);
  (*log)->flush();
  auto lines = lines_of(dir.path() + "/a.log");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(lines[0])["call_id_hash"], "");
}

TEST(AuditLog, HostileLabelsCannotBreakTheLine) {
  test::TempDir dir;
  auto log = AuditLog::open(dir.path() + "/a.log", false);
  ASSERT_TRUE(log.ok());
  AuditRecord r = sample();
  r.agent_id = "evil\n{\"forged\":true}\xff";
  r.turn_id = "t\r\n";
  (*log)->record(r);
  (*log)->flush();
  auto lines = lines_of(dir.path() + "/a.log");
  ASSERT_EQ(lines.size(), 1u) << "a newline in a label must not start a second record";
  auto j = nlohmann::json::parse(lines[0]);
  EXPECT_FALSE(j.contains("forged"));
}

TEST(AuditLog, WithoutAFileItIsANoOp) {
  auto log = AuditLog::open("", false);
  ASSERT_TRUE(log.ok());
  (*log)->record(sample());
  (*log)->flush();
}

TEST(AuditLog, AnUnwritableFileIsAnError) {
  auto log = AuditLog::open("/proc/codexd-no-such-dir/audit.log", false);
  EXPECT_FALSE(log.ok());
}

TEST(AuditLog, ItAppendsToAnExistingLog) {
  test::TempDir dir;
  const std::string path = dir.path() + "/audit.log";
  std::ofstream(path) << "{\"earlier\":1}\n";
  {
    auto log = AuditLog::open(path, false);
    ASSERT_TRUE(log.ok());
    (*log)->record(sample());
  }
  auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "{\"earlier\":1}");
}

}  // namespace
}  // namespace codexd::orchestrator
