// `codexctl completion bash|zsh|fish` (issue 16 item 4): each script, loaded into its real
// shell, offers what the binary has: subcommands, nested ones, each command's options, the
// shells of `completion`, file names after an option that takes a value, and the command to
// run after `--`. A shell that is not installed is skipped with the reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"
#include "tests/support/test_daemon.h"

namespace codexd::testing {
namespace {

using ::testing::Contains;
using ::testing::IsSupersetOf;
using ::testing::Not;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line.substr(0, line.find('\t')));  // fish adds "\tdescription"
  }
  return out;
}

class CompletionTest : public ::testing::Test {
 protected:
  std::string script_for(const std::string& shell) {
    ProcessResult r = run_process({TestDaemon::codexctl_binary(), "completion", shell});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::string path = dir_.sub("codexctl." + shell);
    dir_.make_file("codexctl." + shell, r.out);
    return path;
  }
  static bool have(const std::string& shell) { return ::access(("/usr/bin/" + shell).c_str(), X_OK) == 0; }

  TempDir dir_{"codexd-completion", TempLocation::kOutsideTmp};
};

// bash: the words typed so far (the last one is being completed) -> COMPREPLY.
TEST_F(CompletionTest, BashOffersWhatTheBinaryHas) {
  if (!have("bash")) GTEST_SKIP() << "no /usr/bin/bash";
  const std::string script = script_for("bash");
  auto complete = [&](const std::string& words) {
    const std::string program = "source '" + script + "'; COMP_WORDS=(" + words + "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
                                "_codexctl; printf '%s\\n' \"${COMPREPLY[@]}\"";
    return lines_of(run_process({"/usr/bin/bash", "-c", program}).out);
  };
  EXPECT_THAT(complete("codexctl ''"), IsSupersetOf({"exec", "sessions", "approvals", "policy", "completion", "--socket", "--json"}));
  EXPECT_THAT(complete("codexctl da"), ::testing::ElementsAre("daemon"));
  EXPECT_THAT(complete("codexctl daemon ''"), Contains("restart"));
  EXPECT_THAT(complete("codexctl approvals w"), ::testing::ElementsAre("watch"));
  EXPECT_THAT(complete("codexctl exec --d"), ::testing::UnorderedElementsAre("--detach", "--dry-run"));
  EXPECT_THAT(complete("codexctl exec ''"), Not(Contains("exec"))) << "subcommands are not offered again";
  EXPECT_THAT(complete("codexctl policy check --r"), ::testing::UnorderedElementsAre("--rules", "--resolve-host-executables"));
  EXPECT_THAT(complete("codexctl completion ''"), IsSupersetOf({"bash", "zsh", "fish"}));
  dir_.make_file("rules-here.rules", "");
  EXPECT_THAT(complete("codexctl policy check --rules '" + dir_.sub("rules-") + "'"), Contains(dir_.sub("rules-here.rules")));
  EXPECT_THAT(complete("codexctl exec -- /usr/bin/tru"), Contains("/usr/bin/true")) << "the command to run";
}

// fish: `complete -C LINE` asks fish itself what it would offer.
TEST_F(CompletionTest, FishOffersWhatTheBinaryHas) {
  if (!have("fish")) GTEST_SKIP() << "fish is not installed (scripts/deps.sh installs it)";
  const std::string script = script_for("fish");
  auto complete = [&](const std::string& line) {
    return lines_of(run_process({"/usr/bin/fish", "--no-config", "-c", "source '" + script + "'; complete -C '" + line + "'"}).out);
  };
  EXPECT_THAT(complete("codexctl "), IsSupersetOf({"exec", "sessions", "approvals", "policy", "completion"}));
  EXPECT_THAT(complete("codexctl da"), ::testing::ElementsAre("daemon"));
  EXPECT_THAT(complete("codexctl daemon "), Contains("restart"));
  EXPECT_THAT(complete("codexctl exec --d"), ::testing::UnorderedElementsAre("--detach", "--dry-run"));
  EXPECT_THAT(complete("codexctl policy check --r"), ::testing::UnorderedElementsAre("--rules", "--resolve-host-executables"));
  EXPECT_THAT(complete("codexctl completion "), ::testing::UnorderedElementsAre("bash", "fish", "zsh"));
  EXPECT_THAT(complete("codexctl exec -- /usr/bin/tru"), Contains("/usr/bin/true"));
}

// zsh: the script's own logic, run by zsh with its completion builtins stubbed (a real
// completion needs an interactive terminal): `compadd -a NAME` prints that array.
TEST_F(CompletionTest, ZshOffersWhatTheBinaryHas) {
  if (!have("zsh")) GTEST_SKIP() << "zsh is not installed (scripts/deps.sh installs it)";
  const std::string script = script_for("zsh");
  EXPECT_EQ(run_process({"/usr/bin/zsh", "-n", script}).exit_code, 0);
  auto complete = [&](const std::string& words) {
    const std::string program =
        "compadd() { [[ $1 == -a ]] && print -l -- ${(P)2}; }; _files() { print FILES; }; _command_names() { print COMMANDS; }; "
        "words=(" + words + "); CURRENT=${#words}; source '" + script + "'";
    return lines_of(run_process({"/usr/bin/zsh", "-f", "-c", program}).out);
  };
  EXPECT_THAT(complete("codexctl ''"), IsSupersetOf({"exec", "sessions", "approvals", "--socket"}));
  EXPECT_THAT(complete("codexctl daemon ''"), Contains("restart"));
  EXPECT_THAT(complete("codexctl exec ''"), IsSupersetOf({"--detach", "--dry-run", "--tty"}));
  EXPECT_THAT(complete("codexctl policy check ''"), Contains("--rules"));
  EXPECT_THAT(complete("codexctl --socket ''"), ::testing::ElementsAre("FILES"));
  EXPECT_THAT(complete("codexctl exec -- ''"), ::testing::ElementsAre("COMMANDS"));
}

}  // namespace
}  // namespace codexd::testing
