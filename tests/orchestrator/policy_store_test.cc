// PolicyStore: the shipped default rules, the copy built into codexd that stands in when the
// file is missing, and the warnings an operator gets about the policy in force.
#include "daemon/orchestrator/policy_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "policies/builtin_rules.h"
#include "tests/support/temp_dir.h"

namespace codexd::orchestrator {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

std::optional<policy::Decision> decide(const PolicyStore& store, const std::vector<std::string>& argv) {
  return store.current()->check(argv, {}).decision;
}

TEST(PolicyStore, TheBuiltInCopyIsTheShippedFile) {
  std::ifstream file(CODEXD_DEFAULT_RULES_FILE);
  ASSERT_TRUE(file) << CODEXD_DEFAULT_RULES_FILE;
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_EQ(policy::builtin_default_rules(), text.str());
}

TEST(PolicyStore, TheShippedFileLoadsWithoutWarnings) {
  PolicyStore store(CODEXD_DEFAULT_RULES_FILE, {});
  ASSERT_TRUE(store.reload().ok);
  const PolicyState state = store.state();
  ASSERT_THAT(state.files, SizeIs(1));
  EXPECT_EQ(state.files[0].path, CODEXD_DEFAULT_RULES_FILE);
  EXPECT_GT(state.rule_count, 0u);
  EXPECT_THAT(state.warnings, IsEmpty());
}

// A binary moved out of its prefix, or a package whose data file went missing: the defaults'
// forbidden and prompt rules still hold, and the operator is told.
TEST(PolicyStore, AMissingDefaultRulesFileLoadsTheBuiltInCopyAndWarns) {
  testing::TempDir dir("codexd-policy-store");
  const std::string missing = dir.sub("share/codexd/default.rules");
  for (bool root_only : {false, true}) {
    SCOPED_TRACE(root_only ? "system mode" : "user mode");
    PolicyStore store(missing, {}, root_only);
    const ReloadResult result = store.reload();
    ASSERT_TRUE(result.ok) << (result.errors.empty() ? "" : result.errors[0]);
    const PolicyState state = store.state();
    ASSERT_THAT(state.files, SizeIs(1));
    EXPECT_EQ(state.files[0].path, policy::kBuiltinDefaultRulesName);
    EXPECT_TRUE(state.files[0].loaded);
    ASSERT_THAT(state.warnings, SizeIs(1));
    EXPECT_THAT(state.warnings[0], HasSubstr("the default rules file " + missing + " is missing"));
    EXPECT_THAT(state.warnings[0], HasSubstr("the copy built into codexd is in force"));
    EXPECT_EQ(decide(store, {"git", "reset", "--hard"}), policy::Decision::kPrompt);
    EXPECT_EQ(decide(store, {"rm", "-rf", "/"}), policy::Decision::kForbidden);
  }
  // Once the file is back, the next reload reads it and the warning goes.
  dir.make_file("share/codexd/default.rules", "prefix_rule(pattern = [\"git\", \"reset\"], decision = \"forbidden\")\n");
  PolicyStore store(missing, {});
  ASSERT_TRUE(store.reload().ok);
  EXPECT_EQ(store.state().files[0].path, missing);
  EXPECT_THAT(store.state().warnings, IsEmpty());
  EXPECT_EQ(decide(store, {"git", "reset", "--hard"}), policy::Decision::kForbidden);
}

TEST(PolicyStore, NoRulesAtAllIsAWarningThatNamesWhereRulesGo) {
  testing::TempDir dir("codexd-policy-store");
  const std::string rules = dir.make_dir("rules");
  PolicyStore store("", {rules});
  ASSERT_TRUE(store.reload().ok);
  const PolicyState state = store.state();
  EXPECT_EQ(state.rule_count, 0u);
  ASSERT_THAT(state.warnings, SizeIs(1));
  EXPECT_THAT(state.warnings[0], HasSubstr("no exec-policy rules are loaded"));
  EXPECT_THAT(state.warnings[0], HasSubstr("`git reset --hard` runs without asking"));
  EXPECT_THAT(state.warnings[0], HasSubstr(rules));
  EXPECT_THAT(state.warnings[0], HasSubstr("policy.include_default_rules = true"));
  EXPECT_FALSE(decide(store, {"git", "reset", "--hard"}).has_value());

  // A rule added and reloaded: the warning goes with the next successful load.
  dir.make_file("rules/git.rules", "prefix_rule(pattern = [\"git\", \"reset\", \"--hard\"], decision = \"prompt\")\n");
  ASSERT_TRUE(store.reload().ok);
  EXPECT_THAT(store.state().warnings, IsEmpty());
}

// A reload that fails keeps the policy in force, and with it the warnings about that policy.
TEST(PolicyStore, AFailedReloadKeepsThePolicyInForceAndItsWarnings) {
  testing::TempDir dir("codexd-policy-store");
  const std::string rules = dir.make_dir("rules");
  PolicyStore store("", {rules});
  ASSERT_TRUE(store.reload().ok);
  dir.make_file("rules/bad.rules", "prefix_rule(pattern = [\"git\"], decision = \"sometimes\")\n");
  const ReloadResult failed = store.reload();
  EXPECT_FALSE(failed.ok);
  ASSERT_THAT(failed.errors, SizeIs(1));
  EXPECT_THAT(failed.errors[0], HasSubstr(dir.sub("rules/bad.rules") + ":1:"));
  EXPECT_EQ(store.state().rule_count, 0u);
  EXPECT_THAT(store.state().warnings, SizeIs(1));
}

TEST(PolicyStore, EachFileReportsHowManyRulesItContributes) {
  testing::TempDir dir("codexd-policy-store");
  const std::string rules = dir.make_dir("rules");
  // A ':' in the name: the file is what precedes ":line:col" in each rule's source.
  dir.make_file("rules/a:b.rules",
                "prefix_rule(pattern = [\"git\", \"push\"], decision = \"prompt\")\n"
                "prefix_rule(pattern = [\"rm\"], decision = \"forbidden\")\n");
  dir.make_file("rules/c.rules", "prefix_rule(pattern = [\"ls\"], decision = \"allow\")\n");
  dir.make_file("rules/empty.rules", "# nothing yet\n");
  PolicyStore store("", {rules});
  ASSERT_TRUE(store.reload().ok);
  std::map<std::string, size_t> counts;
  for (const PolicyFileState& file : store.state().files) counts[file.path] = file.rule_count;
  EXPECT_EQ(counts[dir.sub("rules/a:b.rules")], 2u);
  EXPECT_EQ(counts[dir.sub("rules/c.rules")], 1u);
  EXPECT_EQ(counts[dir.sub("rules/empty.rules")], 0u);
  EXPECT_EQ(store.state().rule_count, 3u);
}

}  // namespace
}  // namespace codexd::orchestrator
