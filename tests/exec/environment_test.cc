#include "daemon/exec/environment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace codexd::exec {
namespace {

using testing::Contains;
using testing::Not;

TEST(Wildcard, CaseInsensitiveStarAndQuestion) {
  EXPECT_TRUE(wildcard_match_ci("*KEY*", "aws_secret_key_id"));
  EXPECT_TRUE(wildcard_match_ci("a?c", "ABC"));
  EXPECT_FALSE(wildcard_match_ci("a?c", "abbc"));
  EXPECT_TRUE(wildcard_match_ci("*", ""));
  EXPECT_FALSE(wildcard_match_ci("", "x"));
  EXPECT_TRUE(wildcard_match_ci("**a**b**", "xxaxxbxx"));
  // Backtracking stays linear enough for hostile patterns.
  EXPECT_FALSE(wildcard_match_ci(std::string(200, '*') + "b", std::string(5000, 'a')));
}

EnvironmentInputs inputs(EnvMap base, EnvMap request = {}) {
  EnvironmentInputs in;
  in.base = std::move(base);
  in.request = std::move(request);
  in.unified_exec = false;
  return in;
}

TEST(Environment, DefaultExcludesDropSecretsIncludingFromTheRequest) {
  EnvironmentPolicy policy;
  auto env = build_child_environment(policy, inputs({{"PATH", "/bin"}, {"GITHUB_TOKEN", "t"}, {"MY_Secret", "s"}},
                                                    {{"API_KEY", "k"}, {"FOO", "bar"}}));
  EXPECT_THAT(env, Contains("PATH=/bin"));
  EXPECT_THAT(env, Contains("FOO=bar"));
  EXPECT_THAT(env, Not(Contains("GITHUB_TOKEN=t")));
  EXPECT_THAT(env, Not(Contains("MY_Secret=s")));
  EXPECT_THAT(env, Not(Contains("API_KEY=k")));
}

TEST(Environment, PolicyOrderMatchesCodex) {
  EnvironmentPolicy policy;
  policy.inherit = EnvironmentPolicy::Inherit::kCore;
  policy.ignore_default_excludes = true;
  policy.exclude = {"HOME"};
  policy.set = {{"ADDED", "1"}, {"GONE", "2"}};
  policy.include_only = {"PATH", "ADDED", "MY_TOKEN"};
  auto env = build_child_environment(policy, inputs({{"PATH", "/bin"}, {"HOME", "/root"}, {"EDITOR", "vi"}},
                                                    {{"MY_TOKEN", "x"}}));
  EXPECT_THAT(env, testing::ElementsAre("ADDED=1", "MY_TOKEN=x", "PATH=/bin"));
}

TEST(Environment, LaunchTokensNeverPassEvenWhenSet) {
  EnvironmentPolicy policy;
  policy.ignore_default_excludes = true;
  policy.set = {{"NODE_REPL_AUTH_TOKEN", "forced"}};
  auto env = build_child_environment(
      policy, inputs({{"OPENAI_IDENTITY_TOKEN_FILE", "/x"}, {"node_repl_auth_token", "y"}}, {{"LD_LIBRARY_PATH", "/z"}}));
  EXPECT_THAT(env, testing::ElementsAre("LD_LIBRARY_PATH=/z"));
}

TEST(Environment, UnifiedExecOverlayWins) {
  EnvironmentPolicy policy;
  auto in = inputs({{"TERM", "xterm-256color"}, {"PAGER", "less"}});
  in.unified_exec = true;
  auto env = build_child_environment(policy, in);
  for (const char* expected : {"NO_COLOR=1", "TERM=dumb", "LANG=C.UTF-8", "LC_CTYPE=C.UTF-8", "LC_ALL=C.UTF-8",
                               "COLORTERM=", "PAGER=cat", "GIT_PAGER=cat", "GH_PAGER=cat", "CODEX_CI=1"}) {
    EXPECT_THAT(env, Contains(expected));
  }
}

// What the caller sets by name (codexctl exec --tty sends its TERM) is not overlaid; what was
// inherited is.
TEST(Environment, TheOverlayLeavesWhatTheRequestSetsByName) {
  EnvironmentPolicy policy;
  auto in = inputs({{"TERM", "vt100"}, {"PAGER", "less"}}, {{"TERM", "xterm-256color"}, {"COLORTERM", "truecolor"}});
  in.unified_exec = true;
  auto env = build_child_environment(policy, in);
  EXPECT_THAT(env, Contains("TERM=xterm-256color"));
  EXPECT_THAT(env, Contains("COLORTERM=truecolor"));
  EXPECT_THAT(env, Contains("PAGER=cat")) << "inherited, so overlaid";
  EXPECT_THAT(env, Contains("NO_COLOR=1"));
}

TEST(Environment, ForcedIdentityVariablesWinOverThePolicy) {
  EnvironmentPolicy policy;
  policy.set = {{"HOME", "/wrong"}};
  auto in = inputs({{"HOME", "/root"}});
  in.forced = {{"HOME", "/home/alice"}, {"USER", "alice"}};
  auto env = build_child_environment(policy, in);
  EXPECT_THAT(env, Contains("HOME=/home/alice"));
  EXPECT_THAT(env, Contains("USER=alice"));
}

}  // namespace
}  // namespace codexd::exec
