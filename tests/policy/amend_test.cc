// Amend: appending allow rules, concurrency, and the CLI argument parser.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "client/policy_check/policy_check.h"
#include "policies/amend.h"
#include "policies/loader.h"
#include "policies/rules_dirs.h"
#include "tests/support/temp_dir.h"

namespace codexd::policy {
namespace {

using testing::read_text_file;

using codexd::testing::TempDir;

TEST(Amend, AppendsDedupesAndFixesNewline) {
  TempDir dir("codexd_amend");
  std::string path = dir.sub("rules/default.rules");
  ASSERT_TRUE(append_allow_prefix_rule(path, {"cargo", "build"}).ok());
  ASSERT_TRUE(append_allow_prefix_rule(path, {"cargo", "build"}).ok());
  EXPECT_EQ(read_text_file(path), "prefix_rule(pattern=[\"cargo\", \"build\"], decision=\"allow\")\n");
  {
    std::ofstream out(path, std::ios::app);
    out << "# no newline";
  }
  ASSERT_TRUE(append_allow_prefix_rule(path, {"é\"\x01", "x"}).ok());
  EXPECT_EQ(read_text_file(path), "prefix_rule(pattern=[\"cargo\", \"build\"], decision=\"allow\")\n# no newline\n"
                            "prefix_rule(pattern=[\"é\\\"\\u0001\", \"x\"], decision=\"allow\")\n");
  // What we write loads back, with the control character intact.
  LoadResult r = load_policy_files({path});
  ASSERT_TRUE(r.ok()) << r.errors[0].located;
  EXPECT_EQ(r.policy->check({"é\"\x01", "x"}, {}).decision, Decision::kAllow);
}

TEST(Amend, RefusesEmptyAndBannedPrefixes) {
  TempDir dir("codexd_amend");
  std::string path = dir.sub("default.rules");
  EXPECT_FALSE(append_allow_prefix_rule(path, {}).ok());
  EXPECT_FALSE(append_allow_prefix_rule(path, {"bash", "-lc"}).ok());
  EXPECT_FALSE(append_allow_prefix_rule(path, {"python3"}).ok());
}

TEST(Amend, ConcurrentAppendsNeitherLoseNorDuplicate) {
  TempDir temp("codexd_amend");
  std::string path = temp.sub("default.rules");
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&path, t] {
      for (int i = 0; i < 25; ++i) {
        // Every thread writes the shared rules and one of its own.
        EXPECT_TRUE(append_allow_prefix_rule(path, {"tool", std::to_string(i)}).ok());
        EXPECT_TRUE(append_allow_prefix_rule(path, {"own" + std::to_string(t), std::to_string(i)}).ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  std::string contents = read_text_file(path);
  size_t lines = static_cast<size_t>(std::count(contents.begin(), contents.end(), '\n'));
  EXPECT_EQ(lines, 25u + 8u * 25u);
  LoadResult r = load_policy_files({path});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.policy->rule_count(), 25u + 8u * 25u);
}

TEST(RulesDirs, ListsRegularRulesFilesSorted) {
  TempDir temp("codexd_amend");
  const std::string& dir = temp.path();
  std::ofstream(dir + "/b.rules") << "";
  std::ofstream(dir + "/a.rules") << "";
  std::ofstream(dir + "/c.txt") << "";
  ASSERT_EQ(::mkdir((dir + "/d.rules").c_str(), 0755), 0);
  auto files = list_rules_files(dir);
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(*files, (std::vector<std::string>{dir + "/a.rules", dir + "/b.rules"}));
  EXPECT_TRUE(list_rules_files(dir + "/missing")->empty());
  EXPECT_EQ(default_rules_directories("/home/u", ""), (std::vector<std::string>{"/etc/codexd/rules", "/home/u/.config/codexd/rules"}));
  EXPECT_EQ(user_amendment_file("/home/u", "/x"), "/x/codexd/rules/default.rules");
}

TEST(PolicyCheckArgs, ClapCompatibleParsing) {
  using client::PolicyCheckArgs;
  auto a = client::parse_policy_check_args({"--rules", "a", "-r", "b", "--rules=c", "--pretty", "--", "git", "--pretty"});
  ASSERT_TRUE(std::holds_alternative<PolicyCheckArgs>(a));
  const auto& args = std::get<PolicyCheckArgs>(a);
  EXPECT_EQ(args.rules, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(args.pretty);
  EXPECT_EQ(args.command, (std::vector<std::string>{"git", "--pretty"}));
  auto unknown = client::parse_policy_check_args({"-r", "a", "--bogus", "x"});
  EXPECT_EQ(std::get<PolicyCheckArgs>(unknown).command, (std::vector<std::string>{"--bogus", "x"}));
  EXPECT_EQ(std::get<int>(client::parse_policy_check_args({"-r", "a"})), 2);
  EXPECT_EQ(std::get<int>(client::parse_policy_check_args({"-r"})), 2);
}

}  // namespace
}  // namespace codexd::policy
