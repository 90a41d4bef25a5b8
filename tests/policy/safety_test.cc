// Known-safe / dangerous heuristics, the shell splitter and the approval-cache key.
#include <gtest/gtest.h>

#include "policies/approval_key.h"
#include "policies/command_safety.h"
#include "policies/shell_split.h"

namespace codexd::policy {
namespace {

using V = std::vector<std::string>;

TEST(KnownSafe, Lists) {
  EXPECT_TRUE(is_known_safe_command({"ls", "-la"}));
  EXPECT_TRUE(is_known_safe_command({"/bin/cat", "f"}));
  EXPECT_TRUE(is_known_safe_command({"numfmt", "1"}));
  EXPECT_FALSE(is_known_safe_command({"cargo", "check"}));
  EXPECT_TRUE(is_known_safe_command({"base64", "f"}));
  EXPECT_FALSE(is_known_safe_command({"base64", "-o", "x"}));
  EXPECT_FALSE(is_known_safe_command({"base64", "-ox"}));
  EXPECT_FALSE(is_known_safe_command({"base64", "--output=x"}));
  EXPECT_TRUE(is_known_safe_command({"find", ".", "-name", "*.c"}));
  for (const char* bad : {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf"}) {
    EXPECT_FALSE(is_known_safe_command({"find", ".", bad})) << bad;
  }
  EXPECT_TRUE(is_known_safe_command({"rg", "x"}));
  EXPECT_FALSE(is_known_safe_command({"rg", "-z", "x"}));
  EXPECT_FALSE(is_known_safe_command({"rg", "--pre=cat", "x"}));
  EXPECT_FALSE(is_known_safe_command({"rg", "--hostname-bin", "h", "x"}));
  EXPECT_TRUE(is_known_safe_command({"sed", "-n", "1,5p", "f"}));
  EXPECT_TRUE(is_known_safe_command({"sed", "-n", "10p"}));
  EXPECT_FALSE(is_known_safe_command({"sed", "-i", "s/a/b/", "f"}));
  EXPECT_FALSE(is_known_safe_command({"sed", "-n", "1,5p", "f", "g"}));
}

TEST(KnownSafe, Git) {
  EXPECT_TRUE(is_known_safe_command({"git", "status"}));
  EXPECT_TRUE(is_known_safe_command({"git", "-C", "repo", "log", "--oneline"}));
  EXPECT_TRUE(is_known_safe_command({"git", "--git-dir=.git", "diff"}));
  EXPECT_FALSE(is_known_safe_command({"git", "-c", "core.pager=evil", "log"}));
  EXPECT_FALSE(is_known_safe_command({"git", "-ccore.pager=evil", "log"}));
  EXPECT_FALSE(is_known_safe_command({"git", "--config-env=a=b", "status"}));
  EXPECT_FALSE(is_known_safe_command({"git", "fetch"}));
  EXPECT_FALSE(is_known_safe_command({"git", "diff", "--ext-diff"}));
  EXPECT_FALSE(is_known_safe_command({"git", "log", "--output=x"}));
  EXPECT_TRUE(is_known_safe_command({"git", "branch"}));
  EXPECT_TRUE(is_known_safe_command({"git", "branch", "-a", "--format=%(refname)"}));
  EXPECT_FALSE(is_known_safe_command({"git", "branch", "-D", "x"}));
}

TEST(KnownSafe, ShellScripts) {
  EXPECT_TRUE(is_known_safe_command({"bash", "-lc", "ls && pwd"}));
  EXPECT_TRUE(is_known_safe_command({"zsh", "-c", "cat a | wc -l"}));
  EXPECT_FALSE(is_known_safe_command({"bash", "-lc", "ls && rm x"}));
  EXPECT_FALSE(is_known_safe_command({"bash", "-lc", "ls > out"}));
  EXPECT_FALSE(is_known_safe_command({"bash", "-lc", "echo $HOME"}));
}

TEST(Dangerous, RmSudoAndScripts) {
  EXPECT_TRUE(command_might_be_dangerous({"rm", "-rf", "x"}));
  EXPECT_TRUE(command_might_be_dangerous({"rm", "-f", "x"}));
  EXPECT_FALSE(command_might_be_dangerous({"rm", "x", "-rf"}));
  EXPECT_TRUE(command_might_be_dangerous({"sudo", "rm", "-rf", "/"}));
  EXPECT_TRUE(command_might_be_dangerous({"bash", "-lc", "ls && rm -rf build"}));
  EXPECT_FALSE(command_might_be_dangerous({"git", "reset", "--hard"}));
  EXPECT_FALSE(command_might_be_dangerous({"git", "push", "--force"}));
}

TEST(ShellSplit, PlainCommands) {
  EXPECT_EQ(parse_plain_commands("ls -la && git status || echo 'a b'; wc -l | head"),
            (std::vector<V>{{"ls", "-la"}, {"git", "status"}, {"echo", "a b"}, {"wc", "-l"}, {"head"}}));
  EXPECT_EQ(parse_plain_commands("rg -g\"*.py\" x"), (std::vector<V>{{"rg", "-g*.py", "x"}}));
  EXPECT_EQ(parse_plain_commands("echo \"multi\nline\""), (std::vector<V>{{"echo", "multi\nline"}}));
  EXPECT_EQ(parse_plain_commands("a\nb"), (std::vector<V>{{"a"}, {"b"}}));
  for (const char* opaque : {"echo $HOME", "echo ${X}", "echo $(id)", "echo `id`", "ls > out", "cat < in", "(ls)",
                             "ls &", "FOO=bar ls", "if true; then ls; fi", "ls &&", "&& ls", "ls ||", "cat <<EOF\nx\nEOF",
                             "echo \"$X\"", "echo 'unterminated", "ls # comment", "{ ls; }", "ls |& cat", ""}) {
    EXPECT_EQ(parse_plain_commands(opaque), std::nullopt) << opaque;
  }
}

TEST(ShellSplit, ExecPolicyVariant) {
  EXPECT_EQ(parse_commands_for_exec_policy("gh run view 1 > /tmp/log && echo saved"),
            (std::vector<V>{{"gh", "run", "view", "1"}, {"echo", "saved"}}));
  EXPECT_EQ(parse_commands_for_exec_policy("FOO=1 make 2>&1 # build"), (std::vector<V>{{"make"}}));
  EXPECT_EQ(parse_commands_for_exec_policy("echo $(id)"), std::nullopt);
}

TEST(ShellSplit, Extraction) {
  EXPECT_TRUE(extract_shell_command({"/bin/bash", "-lc", "ls"}));
  EXPECT_TRUE(extract_shell_command({"sh", "-c", "ls"}));
  EXPECT_FALSE(extract_shell_command({"fish", "-c", "ls"}));
  EXPECT_FALSE(extract_shell_command({"bash", "-x", "ls"}));
  EXPECT_FALSE(extract_shell_command({"bash", "-lc", "ls", "extra"}));
}

TEST(ApprovalKey, Canonicalization) {
  EXPECT_EQ(canonicalize_command_for_approval({"bash", "-lc", "git status"}), (V{"git", "status"}));
  EXPECT_EQ(canonicalize_command_for_approval({"bash", "-lc", "ls && pwd"}), (V{"__codex_shell_script__", "-lc", "ls && pwd"}));
  EXPECT_EQ(canonicalize_command_for_approval({"zsh", "-c", "echo $X"}), (V{"__codex_shell_script__", "-c", "echo $X"}));
  EXPECT_EQ(canonicalize_command_for_approval({"git", "status"}), (V{"git", "status"}));
}

}  // namespace
}  // namespace codexd::policy
