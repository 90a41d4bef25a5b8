// The literal-rules fast path: on every file it accepts it declares exactly what the Starlark
// evaluator declares, and it declines everything outside its subset (the loader then
// evaluates the file, so results and errors stay those of the evaluator).
#include <gtest/gtest.h>

#include "policies/literal_rules.h"
#include "policies/loader.h"
#include "policies/starlark/module.h"

namespace codexd::policy {
namespace {

std::shared_ptr<const starlark::SourceFile> source_of(const std::string& text) {
  return std::make_shared<starlark::SourceFile>("p.rules", text);
}

std::string describe_rule(const PrefixRule& r) {
  std::string out = rule_debug(r) + " @" + r.source;
  return out;
}

// Everything a file declares, as one comparable string.
std::string describe(const FileDeclarations& d) {
  std::string out;
  for (const PrefixRuleCall& call : d.calls) {
    out += "call " + call.location + "\n";
    for (const PrefixRule& r : call.rules) out += "  " + describe_rule(r) + "\n";
    for (const auto& e : call.match_examples) out += "  match " + std::to_string(e.size()) + ":" + (e.empty() ? "" : e[0]) + "\n";
    for (const auto& e : call.not_match_examples) out += "  not_match " + std::to_string(e.size()) + "\n";
  }
  for (const auto& [name, paths] : d.host_executables) {
    out += "host " + name;
    for (const auto& p : paths) out += " " + p;
    out += "\n";
  }
  for (const NetworkRule& n : d.network_rules) {
    out += "net " + n.host + " " + n.protocol + " " + std::string(decision_debug_name(n.decision)) + " " +
           n.justification.value_or("-") + "\n";
  }
  return out;
}

std::string evaluated(const std::string& text) {
  FileDeclarations decl;
  auto result = starlark::eval_module(source_of(text), make_rule_builtins(&decl));
  EXPECT_TRUE(result.ok) << result.error.located_message();
  return describe(decl);
}

void expect_same_as_evaluator(const std::string& text) {
  FileDeclarations decl;
  ASSERT_TRUE(read_literal_rules(source_of(text), &decl)) << text;
  EXPECT_EQ(describe(decl), evaluated(text)) << text;
}

bool accepted(const std::string& text) {
  FileDeclarations decl;
  return read_literal_rules(source_of(text), &decl);
}

TEST(LiteralRules, DeclaresWhatTheEvaluatorDeclares) {
  expect_same_as_evaluator("");
  expect_same_as_evaluator("prefix_rule(pattern=[\"git\", \"push\"], decision=\"prompt\")\n");
  expect_same_as_evaluator("prefix_rule(pattern=[\"git\", \"push\"], decision=\"prompt\")");  // no final newline
  expect_same_as_evaluator(
      "# a comment\n\n   \n  # indented comment\n"
      "prefix_rule(\n"
      "    pattern = [[\"git\", \"hg\"], [\"push\", \"pull\"], 'x'],  # alternatives\n"
      "    decision = 'forbidden',\n"
      "    justification = \"no \\\"pushing\\\" \\x41\\u00e9\\n\",\n"
      "    match = [\"git push x\", [\"hg\", \"pull\", \"x\"]],\n"
      "    not_match = [\"git status\"],\n"
      "    canonical_matching = True,\n"
      ")  # trailing comment\n"
      "prefix_rule([\"ls\"], \"allow\")\n"
      "prefix_rule(pattern=[\"rm\"], canonical_matching=False,)\n"
      "host_executable(name=\"git\", paths=[\"/usr/bin/git\", \"/usr/bin/../bin/git\"])\n"
      "host_executable(\"ls\", [])\n"
      "network_rule(host=\"Example.COM:443\", protocol=\"https_connect\", decision=\"deny\", justification=\"j\")\n"
      "prefix_rule (pattern=['caf\xc3\xa9', \"\\q\\101\"], decision=\"prompt\")\n");
}

TEST(LiteralRules, LocationsCountLinesOfMultiLineCalls) {
  expect_same_as_evaluator("\n\nprefix_rule(\n  pattern=[\"a\"],\n)\n\n# c\nprefix_rule(pattern=[\"b\"])\n");
}

TEST(LiteralRules, DeclinesWhatItDoesNotRead) {
  const char* declined[] = {
      "x = 1\n",
      "prefix_rule(pattern=[\"a\"]); prefix_rule(pattern=[\"b\"])\n",
      "  prefix_rule(pattern=[\"a\"])\n",             // indentation: the parser's error
      "\tprefix_rule(pattern=[\"a\"])\n",
      "prefix_rule(pattern=[\"a\" \"b\"])\n",         // adjacent literals are rejected
      "prefix_rule(pattern=[\"a\" + \"b\"])\n",
      "prefix_rule(pattern=[f\"a\"])\n",
      "prefix_rule(pattern=[r\"a\"])\n",
      "prefix_rule(pattern=[\"\"\"a\"\"\"])\n",
      "prefix_rule(pattern=[\"a\"], decision=\"allow\", decision=\"prompt\")\n",  // repeated name
      "prefix_rule(pattern=[\"a\"], \"allow\")\n",   // positional after named
      "prefix_rule(pattern=[\"a\"], decision=\"maybe\")\n",  // the builtin's own error
      "prefix_rule(pattern=[], decision=\"allow\")\n",
      "prefix_rule()\n",
      "prefix_rule(pattern=[\"a\\xZZ\"])\n",           // bad escape
      "prefix_rule(pattern=[\"a\"]) prefix_rule(pattern=[\"b\"])\n",
      "prefix_rule(pattern=[\"a\"])[0]\n",
      "prefix_rule(pattern=[\"a\"], **{})\n",
      "prefix_rule(pattern=[\"a\"], decision=None)\n",
      "prefix_rule(pattern=[\"a\"], decision=allow)\n",
      "prefix_rule(pattern=[[[[\"a\"]]]])\n",
      "print(\"a\")\n",
      "def f():\n  pass\n",
      "load(\"x\", \"y\")\n",
      "prefix_rule(pattern=[\"unfinished])\n",
      "prefix_rule(pattern=[\"a\"],\n",
      "prefix_rule \\\n(pattern=[\"a\"])\n",
      "\xEF\xBB\xBFprefix_rule(pattern=[\"a\"])\n",
  };
  for (const char* text : declined) EXPECT_FALSE(accepted(text)) << text;
}

TEST(LiteralRules, DeclinesFilesLargeEnoughForTheEvaluatorBudgets) {
  std::string rule = "prefix_rule(pattern=[\"a\"])\n";
  std::string text;
  while (text.size() <= (2u << 20)) text += rule;
  EXPECT_FALSE(accepted(text));
}

// The loader falls back to the evaluator: same errors (file:line:col) as before the fast path.
TEST(LiteralRules, LoaderReportsTheEvaluatorsErrorForADeclinedFile) {
  LoadResult r = load_policy_text("p.rules", "prefix_rule(pattern=[\"a\"])\nprefix_rule(pattern=[\"b\"], decision=\"maybe\")\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0].located.rfind("p.rules:2:1: ", 0), 0u) << r.errors[0].located;
  EXPECT_NE(r.errors[0].located.find("invalid decision: maybe"), std::string::npos) << r.errors[0].located;
}

TEST(LiteralRules, LoaderChecksExamplesOfLiteralFiles) {
  LoadResult r = load_policy_text("p.rules", "prefix_rule(pattern=[\"git\", \"push\"], match=[\"git pull\"])\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0].located.rfind("p.rules:1:1: expected every example to match", 0), 0u) << r.errors[0].located;
}

}  // namespace
}  // namespace codexd::policy
