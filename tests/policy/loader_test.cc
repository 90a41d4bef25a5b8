// Loading rules files: every builtin and error class, matching, host resolution, canonical
// matching and the JSON bytes.
#include <gtest/gtest.h>

#include "policies/check_json.h"
#include "policies/loader.h"
#include "policies/rule_builtins.h"
#include "policies/shlex.h"

namespace codexd::policy {
namespace {

LoadOptions test_options() {
  LoadOptions o;
  o.cwd = "/work";
  o.home = "/home/u";
  return o;
}

std::shared_ptr<const Policy> load_ok(const std::string& text) {
  LoadResult r = load_policy_text("p.rules", text, test_options());
  EXPECT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors[0].located);
  return r.policy;
}

std::string load_error(const std::string& text) {
  LoadResult r = load_policy_text("p.rules", text, test_options());
  return r.ok() ? "" : r.errors[0].located;
}

std::string check(const std::string& rules, std::vector<std::string> argv, bool resolve = false) {
  auto p = load_ok(rules);
  if (!p) return "";
  MatchOptions o;
  o.resolve_host_executables = resolve;
  o.cwd = "/work";
  o.home = "/home/u";
  return evaluation_to_json(p->check(argv, o), false);
}

TEST(PolicyLoad, PrefixRuleAndStrictestDecision) {
  std::string rules = R"(prefix_rule(pattern=["git"], decision="prompt")
prefix_rule(pattern=["git", "push"], decision="prompt", justification="j")
prefix_rule(pattern=["git", "push", "--force"], decision="forbidden")
)";
  EXPECT_EQ(check(rules, {"git", "push", "--force"}),
            R"({"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["git"],"decision":"prompt"}},)"
            R"({"prefixRuleMatch":{"matchedPrefix":["git","push"],"decision":"prompt","justification":"j"}},)"
            R"({"prefixRuleMatch":{"matchedPrefix":["git","push","--force"],"decision":"forbidden"}}],"decision":"forbidden"})");
  EXPECT_EQ(check(rules, {"svn"}), R"({"matchedRules":[]})");
}

TEST(PolicyLoad, AlternativesExpandOnlyInFirstPosition) {
  std::string rules = R"(prefix_rule(pattern=[["bash", "sh", "bash"], "-c"])
prefix_rule(pattern=["x", ["a", "a"]]))";
  auto p = load_ok(rules);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->rule_count(), 4u);
  EXPECT_EQ(p->check({"bash", "-c", "x"}, {}).matched_rules.size(), 2u);
  EXPECT_EQ(p->check({"x", "a"}, {}).matched_rules.size(), 1u);
}

TEST(PolicyLoad, ErrorClasses) {
  EXPECT_EQ(load_error("prefix_rule(pattern=[\"npm\"], decision=\"ask\")\n"), "p.rules:1:1: invalid decision: ask");
  EXPECT_EQ(load_error("prefix_rule(pattern=[])\n"), "p.rules:1:1: invalid pattern element: pattern cannot be empty");
  EXPECT_EQ(load_error("prefix_rule(pattern=[\"a\", []])\n"),
            "p.rules:1:1: invalid pattern element: pattern alternatives cannot be empty");
  EXPECT_EQ(load_error("prefix_rule(pattern=[1])\n"),
            "p.rules:1:1: invalid pattern element: pattern element must be a string or list of strings (got int)");
  EXPECT_EQ(load_error("prefix_rule(pattern=[(\"a\",)])\n"),
            "p.rules:1:1: invalid pattern element: pattern element must be a string or list of strings (got tuple)");
  EXPECT_EQ(load_error("prefix_rule(pattern=[\"npm\", [\"ci\", None]])\n"),
            "p.rules:1:1: invalid pattern element: pattern alternative must be a string (got NoneType)");
  EXPECT_EQ(load_error("prefix_rule(pattern=\"x\")\n"),
            "p.rules:1:1: Type of parameter `pattern` doesn't match, expected `list`, actual `string (repr: \"x\")`");
  EXPECT_EQ(load_error("prefix_rule([\"a\"], decision=None)\n"),
            "p.rules:1:1: Type of parameter `decision` doesn't match, expected `str`, actual `NoneType (repr: None)`");
  EXPECT_EQ(load_error("prefix_rule()\n"), "p.rules:1:1: Missing parameter `pattern` for call to `prefix_rule`");
  EXPECT_EQ(load_error("prefix_rule(pattern=[\"a\"], reviewer=\"x\")\n"),
            "p.rules:1:1: Found `reviewer` extra named parameter(s) for call to prefix_rule");
  EXPECT_EQ(load_error("prefix_rule([\"a\"], \"allow\", [], [], \"j\", True, 7)\n"),
            "p.rules:1:1: Found 1 extra positional argument(s) for call to prefix_rule");
  EXPECT_EQ(load_error("prefix_rule([\"a\"], pattern=[\"b\"])\n"), "p.rules:1:1: Argument `pattern` occurs more than once");
  EXPECT_EQ(load_error("prefix_rule([\"a\"], justification=\"  \")\n"), "p.rules:1:1: invalid rule: justification cannot be empty");
  EXPECT_EQ(load_error("prefix_rule([\"a\"], canonical_matching=\"yes\")\n"),
            "p.rules:1:1: Type of parameter `canonical_matching` doesn't match, expected `bool`, actual `string (repr: \"yes\")`");
  EXPECT_EQ(load_error("deny_rule(pattern=[\"npx\"])\n"), "p.rules:1:1: Variable `deny_rule` not found");
  EXPECT_EQ(load_error("prefix_rule([\"a\"])\nprefix_rule = None\n"),
            "p.rules:1:1: Local variable `prefix_rule` referenced before assignment");
}

TEST(PolicyLoad, Examples) {
  EXPECT_EQ(load_error("prefix_rule(pattern=[\"npm\"], match=[\"npm 'oops\"])\n"),
            "p.rules:1:1: invalid example: example string has invalid shell syntax");
  EXPECT_EQ(load_error("prefix_rule(pattern=[\"npm\"], match=[[]])\n"), "p.rules:1:1: invalid example: example cannot be an empty list");
  EXPECT_EQ(load_error("prefix_rule(pattern=[\"npm\"], match=[\" # c\"])\n"),
            "p.rules:1:1: invalid example: example cannot be an empty string");
  EXPECT_EQ(load_error("prefix_rule(pattern=[\"npm\"], match=[[\"a\", 1]])\n"),
            "p.rules:1:1: invalid example: example tokens must be strings (got int)");
  EXPECT_EQ(load_error("prefix_rule(pattern=[\"npm\"], match=[1])\n"),
            "p.rules:1:1: invalid example: example must be a string or list of strings (got int)");
  EXPECT_EQ(load_error("prefix_rule(pattern=[\"npm\", \"ci\"], match=[\"npm install\"])\n"),
            "p.rules:1:1: expected every example to match at least one rule. rules: [\"PrefixRule { pattern: "
            "PrefixPattern { canonical_matching: false, first: \\\"npm\\\", rest: [Single(\\\"ci\\\")] }, decision: "
            "Allow, justification: None }\"]; unmatched examples: [\"npm install\"]");
  EXPECT_EQ(load_error("prefix_rule(pattern=[\"npm\"], decision=\"prompt\", not_match=[\"npm ci\"])\n"),
            "p.rules:1:1: expected example to not match rule `PrefixRuleMatch { matched_prefix: [\"npm\"], decision: "
            "Prompt, resolved_program: None, justification: None }`: npm ci");
  // Examples use host resolution: an absolute path satisfies a basename rule.
  EXPECT_EQ(load_error("prefix_rule(pattern=[\"ruff\"], match=[\"/usr/local/bin/ruff format\"])\n"), "");
  // An evaluation error later in the file hides an earlier example failure.
  EXPECT_NE(load_error("prefix_rule(pattern=[\"a\"], match=[\"b\"])\nfail(\"later\")\n").find("fail: later"), std::string::npos);
}

TEST(PolicyLoad, HostExecutables) {
  std::string rules = R"(host_executable(name="node", paths=["/usr/bin/node", "/usr/local/bin/../bin/node"])
prefix_rule(pattern=["node", "--version"])
prefix_rule(pattern=["node"], decision="prompt")
prefix_rule(pattern=["deno"], decision="prompt")
)";
  EXPECT_EQ(check(rules, {"/usr/bin/node", "--version"}, true),
            R"({"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["node","--version"],"decision":"allow","resolvedProgram":"/usr/bin/node"}},)"
            R"({"prefixRuleMatch":{"matchedPrefix":["node"],"decision":"prompt","resolvedProgram":"/usr/bin/node"}}],"decision":"prompt"})");
  EXPECT_EQ(check(rules, {"/usr/local/bin/node"}, true),
            R"({"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["node"],"decision":"prompt","resolvedProgram":"/usr/local/bin/node"}}],"decision":"prompt"})");
  EXPECT_EQ(check(rules, {"/opt/node/bin/node"}, true), R"({"matchedRules":[]})");
  EXPECT_EQ(check(rules, {"./deno"}, true),
            R"({"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["deno"],"decision":"prompt","resolvedProgram":"/work/deno"}}],"decision":"prompt"})");
  EXPECT_EQ(check(rules, {"~/bin/deno"}, true),
            R"({"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["deno"],"decision":"prompt","resolvedProgram":"/home/u/bin/deno"}}],"decision":"prompt"})");
  EXPECT_EQ(check(rules, {"/usr/bin/node"}, false), R"({"matchedRules":[]})");

  EXPECT_EQ(load_error("host_executable(name=\"node\", paths=[\"./node\"])\n"),
            "p.rules:1:1: invalid rule: host_executable paths must be absolute (got ./node)");
  EXPECT_EQ(load_error("host_executable(name=\"node\", paths=[\"~/node\"])\n"),
            "p.rules:1:1: invalid rule: host_executable paths must be absolute (got ~/node)");
  EXPECT_EQ(load_error("host_executable(name=\"/usr/bin/node\", paths=[])\n"),
            "p.rules:1:1: invalid rule: host_executable name must be a bare executable name (got /usr/bin/node)");
  EXPECT_EQ(load_error("host_executable(name=\"\", paths=[])\n"), "p.rules:1:1: invalid rule: host_executable name cannot be empty");
  EXPECT_EQ(load_error("host_executable(name=\"git\", paths=[\"/usr/bin/gat\"])\n"),
            "p.rules:1:1: invalid rule: host_executable path `/usr/bin/gat` must have basename `git`");
  EXPECT_EQ(load_error("host_executable(name=\"git\", paths=[1])\n"),
            "p.rules:1:1: invalid rule: host_executable paths must be strings (got int)");
}

TEST(PolicyLoad, CanonicalMatching) {
  std::string rules = "prefix_rule(pattern=[\"Get-Process\", \"STRASSE\"], canonical_matching=True)\n";
  EXPECT_EQ(check(rules, {"get-process", "straße"}),
            R"({"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["get-process","straße"],"decision":"allow"}}],"decision":"allow"})");
  EXPECT_EQ(check(rules, {"ｇet-process", "strasse"}), R"({"matchedRules":[]})");
  EXPECT_EQ(check("prefix_rule(pattern=[\"caf\xC3\xA9\"], canonical_matching=True)\n", {"cafe\xCC\x81"}),
            "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"cafe\xCC\x81\"],\"decision\":\"allow\"}}],\"decision\":\"allow\"}");
  // Without the flag, comparison is exact.
  EXPECT_EQ(check("prefix_rule(pattern=[\"Make\"])\n", {"make"}), R"({"matchedRules":[]})");
}

TEST(PolicyLoad, NetworkRules) {
  auto p = load_ok("network_rule(host=\" PyPI.org.:443 \", protocol=\"https_connect\", decision=\"deny\", justification=\"x\")\n");
  ASSERT_TRUE(p);
  ASSERT_EQ(p->network_rules().size(), 1u);
  EXPECT_EQ(p->network_rules()[0].host, "pypi.org");
  EXPECT_EQ(p->network_rules()[0].protocol, "https");
  EXPECT_EQ(p->network_rules()[0].decision, Decision::kForbidden);
  EXPECT_EQ(load_error("network_rule(host=\"a\", protocol=\"ftp\", decision=\"allow\")\n"),
            "p.rules:1:1: invalid rule: network_rule protocol must be one of http, https, socks5_tcp, socks5_udp (got ftp)");
  EXPECT_EQ(load_error("network_rule(host=\"a\", protocol=\"http\", decision=\"ask\")\n"), "p.rules:1:1: invalid decision: ask");
  EXPECT_EQ(load_error("network_rule(host=\"*.a.com\", protocol=\"http\", decision=\"allow\")\n"),
            "p.rules:1:1: invalid rule: network_rule host must be a specific host; wildcards are not allowed");
  EXPECT_EQ(load_error("network_rule(host=\"http://a\", protocol=\"http\", decision=\"allow\")\n"),
            "p.rules:1:1: invalid rule: network_rule host must be a hostname or IP literal (without scheme or path)");
  EXPECT_EQ(load_error("network_rule(host=\"[::1\", protocol=\"http\", decision=\"allow\")\n"),
            "p.rules:1:1: invalid rule: network_rule host has an invalid bracketed IPv6 literal");
}

TEST(PolicyLoad, SeveralFilesAllOrNothingWithEveryError) {
  LoadResult r = load_policy_files({"/nonexistent/a.rules", std::string(CODEXD_SOURCE_DIR) + "/policies/default.rules",
                                    "/nonexistent/b.rules"},
                                   test_options());
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(r.policy, nullptr);
  EXPECT_EQ(r.errors[0].located, "/nonexistent/a.rules: No such file or directory (os error 2)");
  EXPECT_EQ(r.errors[0].codex_report,
            "Error: failed to read policy at /nonexistent/a.rules\n\nCaused by:\n    No such file or directory (os error 2)\n");
  LoadResult dir = load_policy_files({"/"}, test_options());
  EXPECT_EQ(dir.errors[0].located, "/: Is a directory (os error 21)");
  LoadResult utf8 = load_policy_text("bad.rules", "x = \"\xff\"\n", test_options());
  EXPECT_EQ(utf8.errors[0].located, "bad.rules: stream did not contain valid UTF-8");
}

TEST(PolicyLoad, DefaultRulesLoad) {
  LoadResult r = load_policy_files({std::string(CODEXD_SOURCE_DIR) + "/policies/default.rules"}, test_options());
  ASSERT_TRUE(r.ok()) << r.errors[0].located;
  MatchOptions o;
  EXPECT_EQ(r.policy->check({"rm", "-rf", "/"}, o).decision, Decision::kForbidden);
  EXPECT_EQ(r.policy->check({"git", "reset", "--hard"}, o).decision, Decision::kPrompt);
  EXPECT_EQ(r.policy->check({"git", "status"}, o).decision, std::nullopt);
}

TEST(PolicyJson, PrettyAndEscaping) {
  Evaluation e;
  RuleMatch m;
  m.matched_prefix = {"a\"b", "\x01\t/é"};
  m.decision = Decision::kPrompt;
  e.matched_rules.push_back(m);
  e.decision = Decision::kPrompt;
  EXPECT_EQ(evaluation_to_json(e, false),
            "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"a\\\"b\",\"\\u0001\\t/é\"],\"decision\":\"prompt\"}}],\"decision\":\"prompt\"}");
  EXPECT_EQ(evaluation_to_json(Evaluation{}, true), "{\n  \"matchedRules\": []\n}");
}

TEST(Shlex, SplitAndJoin) {
  EXPECT_EQ(shlex_split("a 'b c' \"d\\\"e\" f\\ g #c"), (std::vector<std::string>{"a", "b c", "d\"e", "f g"}));
  EXPECT_EQ(shlex_split("a#b"), (std::vector<std::string>{"a#b"}));
  EXPECT_EQ(shlex_split("a 'b"), std::nullopt);
  EXPECT_EQ(shlex_join({"a", "b c", "it's", "", "$HOME", "é"}), "a 'b c' \"it's\" '' '$HOME' 'é'");
}

}  // namespace
}  // namespace codexd::policy
