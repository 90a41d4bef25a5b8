// The codexctl binary against a real daemon: exec (exit code, live streaming, --json,
// --detach), sessions, attach, write, poll, kill --signal, status, and errors that print the
// daemon's message and exit non-zero.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <sstream>
#include <thread>

#include "tests/integration/daemon_fixture.h"
#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

class CodexctlTest : public UnsandboxedDaemonTest {
 protected:
  ProcessResult ctl(const std::vector<std::string>& args, const std::string& stdin_data = "") {
    return daemon_.codexctl(args, stdin_data);
  }
  // `exec --detach`: the session id, alone on stdout (and said on stderr).
  int detach(const std::vector<std::string>& command, bool tty = false) {
    std::vector<std::string> args = {"exec", "--detach", "-C", daemon_.workspace()};
    if (tty) args.push_back("--tty");
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    auto r = ctl(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, MatchesRegex("[0-9]+\n")) << "stdout holds the id alone";
    const int id = std::atoi(r.out.c_str());
    EXPECT_EQ(r.err, "codexctl: session " + std::to_string(id) + " is running (codexctl attach " + std::to_string(id) + ")\n");
    return id;
  }
};

TEST_F(CodexctlTest, ExecExitsWithTheCommandsCodeAndPrintsItsOutput) {
  auto r = ctl({"exec", "-C", daemon_.workspace(), "--", "/bin/sh", "-c", "echo out; echo err >&2; exit 9"});
  EXPECT_EQ(r.exit_code, 9);
  EXPECT_EQ(r.out, "out\nerr\n");  // merged, as the session produced it
  auto shell = ctl({"exec", "-C", daemon_.workspace(), "--shell", "echo \"$((6 * 7))\""});
  EXPECT_EQ(shell.exit_code, 0) << shell.err;
  EXPECT_EQ(shell.out, "42\n");
  auto env = ctl({"exec", "-C", daemon_.workspace(), "-e", "GREETING=hi there", "--", "/bin/sh", "-c", "echo \"$GREETING\""});
  EXPECT_EQ(env.exit_code, 0) << env.err;
  EXPECT_EQ(env.out, "hi there\n");
}

TEST_F(CodexctlTest, ExecStreamsALongRunningCommandUntilItExits) {
  Fifo go(daemon_.workspace(), "go");
  // The command outlives the first 250 ms wait; codexctl follows it and returns its code.
  std::thread release([&] { go.write("x\n"); });
  auto r = ctl({"exec", "-C", daemon_.workspace(), "--", "/bin/sh", "-c", "echo first; read a < go; echo second; exit 6"});
  release.join();
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_EQ(r.out, "first\nsecond\n");
  // The exit was consumed: nothing is left in the daemon.
  EXPECT_TRUE(list_sessions(*stub_).empty());
}

TEST_F(CodexctlTest, ExecJsonPrintsTheExecResultInCodexsFormat) {
  auto r = ctl({"--json", "exec", "-C", daemon_.workspace(), "--", "/bin/sh", "-c", "printf abcdefgh; exit 3"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  EXPECT_EQ(json["exit_code"], 3);
  EXPECT_EQ(json["original_token_count"], "2");  // uint64 is a string in proto3 JSON
  EXPECT_EQ(json["output"], "YWJjZGVmZ2g=");     // bytes are base64
  EXPECT_EQ(json["output_text"], "abcdefgh");     // and, beside them, as text
  EXPECT_FALSE(json.contains("session_id"));
  EXPECT_THAT(json["text"].get<std::string>(),
              MatchesRegex("Chunk ID: [0-9a-f]{6}\nWall time: [0-9]+\\.[0-9]{4} seconds\nProcess exited with code 3\n"
                           "Original token count: 2\nOutput:\nabcdefgh"));
  EXPECT_THAT(json["text"].get<std::string>(), HasSubstr("Chunk ID: " + json["chunk_id"].get<std::string>() + "\n"));
}

TEST_F(CodexctlTest, DetachSessionsPollAndKillWithASignal) {
  const int id = detach({"/bin/bash", "-c", "trap 'echo got-int; exit 42' INT; echo ready; while :; do sleep 1; done"});
  ASSERT_GE(id, 1000);
  auto listed = ctl({"sessions"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  // PEAK-MEM / CPU / PIDS: the session's cgroup accounting so far ("-" when not measured).
  EXPECT_THAT(listed.out, MatchesRegex("ID +PID +STATE +UID +AGENT +AGE +NET +PEAK-MEM +CPU +PIDS +COMMAND\n" +
                                       std::to_string(id) +
                                       " +[0-9]+ +running +0 +codexctl +[0-9]+s +(off|proxy|host) +([0-9.]+[BKMGT]|-) "
                                       "+([0-9.]+s|-) +([0-9]+|-) +/bin/bash -c 'trap .*\n"));
  auto json = ctl({"--json", "sessions"});
  auto parsed = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << json.out;
  ASSERT_EQ(parsed["sessions"].size(), 1u);
  EXPECT_EQ(parsed["sessions"][0]["session_id"], id);
  EXPECT_EQ(parsed["sessions"][0]["running"], true);

  // What the first wait had (not printed by --detach), re-read from offset 0; then `poll
  // --yield-ms` returns at the first output.
  std::string out = ctl({"poll", std::to_string(id), "--from-offset", "0"}).out;
  for (int i = 0; i < 50 && out.find("ready\n") == std::string::npos; ++i) {
    auto polled = ctl({"poll", std::to_string(id), "--yield-ms", "10000"});
    ASSERT_EQ(polled.exit_code, 0) << polled.err;
    out += polled.out;
  }
  EXPECT_EQ(out, "ready\n");

  auto killed = ctl({"kill", std::to_string(id), "--signal", "int"});
  EXPECT_EQ(killed.exit_code, 0) << killed.err;
  EXPECT_EQ(killed.err, "");
  // The exit is reported once by poll, on stderr after the output.
  ProcessResult polled;
  out.clear();
  for (int i = 0; i < 50; ++i) {
    polled = ctl({"poll", std::to_string(id), "--yield-ms", "10000"});
    ASSERT_EQ(polled.exit_code, 0) << polled.err;
    out += polled.out;
    if (!polled.err.empty()) break;
  }
  EXPECT_EQ(out, "got-int\n");
  EXPECT_EQ(polled.err, "codexctl: process exited with code 42\n");
  auto gone = ctl({"poll", std::to_string(id)});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_EQ(gone.err, "codexctl: Unknown process id " + std::to_string(id) + "\n");
  EXPECT_EQ(gone.out, "");
}

TEST_F(CodexctlTest, PollFromOffsetPrintsTheOutputAgainAndTheNextOffset) {
  const int id = detach({"sh", "-c", "echo hello; exec sleep 60"});
  std::string out = ctl({"poll", std::to_string(id), "--from-offset", "0"}).out;  // what the first wait had
  for (int i = 0; i < 50 && out.find("hello\n") == std::string::npos; ++i) {
    auto polled = ctl({"poll", std::to_string(id), "--yield-ms", "10000"});
    ASSERT_EQ(polled.exit_code, 0) << polled.err;
    out += polled.out;
  }
  ASSERT_EQ(out, "hello\n");
  for (int twice = 0; twice < 2; ++twice) {  // already delivered: the same bytes every time
    auto again = ctl({"poll", std::to_string(id), "--from-offset", "2"});
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(again.out, "llo\n");
    EXPECT_EQ(again.err, "codexctl: next offset 6\n");
  }
  auto past = ctl({"poll", std::to_string(id), "--from-offset", "7"});
  EXPECT_EQ(past.exit_code, 1);
  EXPECT_THAT(past.err, HasSubstr("at offset 6"));
  EXPECT_EQ(ctl({"kill", std::to_string(id), "--signal", "kill"}).exit_code, 0);
}

TEST_F(CodexctlTest, KillSignalsMapToTheirExitCodes) {
  for (auto [signal, code] : std::vector<std::pair<std::string, int>>{{"term", 143}, {"kill", 137}, {"int", 130}}) {
    const int id = detach({"sleep", "1000"});
    auto killed = ctl({"kill", std::to_string(id), "--signal", signal});
    EXPECT_EQ(killed.exit_code, 0) << killed.err;
    auto attached = ctl({"attach", std::to_string(id)});
    EXPECT_EQ(attached.exit_code, code) << signal << ": " << attached.err;
    auto gone = ctl({"--json", "poll", std::to_string(id)});
    auto json = nlohmann::json::parse(gone.out, nullptr, false);
    ASSERT_FALSE(json.is_discarded()) << gone.out << gone.err;
    EXPECT_EQ(json["exit_code"], code) << signal;
    EXPECT_EQ(json["signal"], code - 128) << signal;
  }
  auto again = ctl({"kill", "4242"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_EQ(again.err, "codexctl: Unknown process id 4242\n");
}

TEST_F(CodexctlTest, AttachReplaysAndFollowsUntilTheExitCode) {
  Fifo go(daemon_.workspace(), "go");
  const int id = detach({"/bin/sh", "-c", "echo one; read a < go; echo two; exit 4"});
  std::thread release([&] { go.write("x\n"); });
  auto attached = ctl({"attach", std::to_string(id)});
  release.join();
  EXPECT_EQ(attached.exit_code, 4) << attached.err;
  EXPECT_EQ(attached.out, "one\ntwo\n");
  auto from = ctl({"attach", std::to_string(id), "--from", "2"});
  EXPECT_EQ(from.exit_code, 4) << from.err;
  EXPECT_EQ(from.out, "e\ntwo\n");
  // attach does not consume the exit: poll reports it (and the output it never returned).
  auto polled = ctl({"poll", std::to_string(id)});
  // ("one" may have gone with the first wait of --detach, which does not print it.)
  EXPECT_TRUE(polled.out == "one\ntwo\n" || polled.out == "two\n") << polled.out;
  EXPECT_EQ(polled.err, "codexctl: process exited with code 4\n");
}

TEST_F(CodexctlTest, WriteTalksToATtySessionAndIsRefusedOnAPipe) {
  const int tty = detach({"cat"}, true);
  std::string out;
  auto written = ctl({"write", std::to_string(tty), "-e", "hello\\n"});
  EXPECT_EQ(written.exit_code, 0) << written.err;
  out = written.out;
  for (int i = 0; i < 50 && out.size() < 14; ++i) out += ctl({"poll", std::to_string(tty), "--yield-ms", "10000"}).out;
  EXPECT_EQ(out, "hello\r\nhello\r\n");

  const int pipe = detach({"sleep", "1000"});
  auto refused = ctl({"write", std::to_string(pipe), "text"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.err, "codexctl: session " + std::to_string(pipe) +
                             " has no stdin: it was started without --tty (stdin closed); start it with `codexctl exec "
                             "--tty` to write to it\n");
}

// --json exec is for scripts: it waits for the end and exits with the command's code, however
// long the command runs (it once printed the first answer and exited 0 while the command ran).
TEST_F(CodexctlTest, JsonExecWaitsForTheEndAndExitsWithTheCommandsCode) {
  // The command outlives the first answer (250 ms) by its own sleep: codexctl has to poll on.
  auto r = ctl({"--json", "exec", "--yield-ms", "250", "-C", daemon_.workspace(), "--", "/bin/sh", "-c",
                "echo first; sleep 1; echo second; exit 4"});
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  EXPECT_EQ(json["exit_code"], 4);
  EXPECT_FALSE(json.contains("session_id"));
  EXPECT_EQ(json["output"], "Zmlyc3QKc2Vjb25kCg==");  // base64("first\nsecond\n")
  EXPECT_TRUE(list_sessions(*stub_).empty()) << "the exit was consumed";
}

// --json --detach returns after the shortest first wait with the session id, not after the
// 10 s that --json waits otherwise.
TEST_F(CodexctlTest, JsonDetachReturnsTheSessionIdAfterTheShortestWait) {
  auto r = ctl({"--json", "exec", "--detach", "-C", daemon_.workspace(), "--", "sleep", "1000"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  ASSERT_TRUE(json.contains("session_id")) << r.out;
  EXPECT_LT(json["wall_time_seconds"].get<double>(), 5.0) << "it waited for the 10 s yield of --json";
  EXPECT_EQ(list_sessions(*stub_).size(), 1u);
}

// A command that ends within the first wait leaves nothing to detach from: codexctl says so
// (it once printed nothing at all) and exits with the command's code.
TEST_F(CodexctlTest, DetachOfACommandThatEndsInTheFirstWaitSaysSo) {
  auto r = ctl({"exec", "--detach", "-C", daemon_.workspace(), "--", "/bin/sh", "-c", "echo done; exit 5"});
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_EQ(r.out, "done\n");
  EXPECT_EQ(r.err, "codexctl: the command exited with code 5 within the first wait; no session was left running\n");
}

TEST_F(CodexctlTest, SocketTakesUnixColonPathLikeTheDaemonsListen) {
  for (const std::string& form : {"unix:" + daemon_.socket_path(), "unix://" + daemon_.socket_path()}) {
    auto r = run_process({TestDaemon::codexctl_binary(), "--socket", form, "status"});
    EXPECT_EQ(r.exit_code, 0) << form << ": " << r.err;
  }
}

TEST_F(CodexctlTest, VersionAndUnknownCommands) {
  auto version = ctl({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.out, MatchesRegex("codexctl [0-9]+\\.[0-9]+\\.[0-9]+\n"));
  auto typo = ctl({"sesions"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_EQ(typo.err, "codexctl: unknown command \"sesions\"; did you mean \"sessions\"? (codexctl --help lists them)\n");
  auto after_options = ctl({"--json", "--agent-id", "a", "statsu"});
  EXPECT_EQ(after_options.exit_code, 2);
  EXPECT_THAT(after_options.err, HasSubstr("did you mean \"status\"?"));
  auto far = ctl({"frobnicate"});
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_EQ(far.err, "codexctl: unknown command \"frobnicate\" (codexctl --help lists them)\n");
}

TEST_F(CodexctlTest, StatusDescribesTheDaemon) {
  const int id = detach({"sleep", "1000"});
  ASSERT_GE(id, 1000);
  auto status = ctl({"status"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_THAT(status.out, MatchesRegex("codexd [^ ]+ \\(user mode\\), pid " + std::to_string(daemon_.pid()) + ", up [0-9]+s\n(.|\n)*"));
  EXPECT_THAT(status.out, HasSubstr("socket:    " + daemon_.socket_path() + "\n"));
  EXPECT_THAT(status.out, HasSubstr("sessions:  1 live, 1 started\n"));
  EXPECT_THAT(status.out, HasSubstr("you:       uid 0 (admin)\n"));
  EXPECT_THAT(status.out, Not(HasSubstr("WARNING"))) << "the shipped default rules are loaded";
  auto json = nlohmann::json::parse(ctl({"--json", "status"}).out, nullptr, false);
  ASSERT_FALSE(json.is_discarded());
  EXPECT_EQ(json["mode"], "user");
  EXPECT_EQ(json["sessions_live"], 1);
}

// Default rules turned off and no rules of its own: the heuristics alone would let
// `git reset --hard` run without asking, and the operator hears it from status and the log.
TEST(CodexctlStatus, WarnsLoudlyWhenNoRulesAreLoaded) {
  TestDaemonOptions options = unsandboxed();
  options.include_default_rules = false;
  TestDaemon daemon(options);
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto status = daemon.codexctl({"status"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_THAT(status.out, HasSubstr("policy:    0 rules"));
  EXPECT_THAT(status.out, HasSubstr("  WARNING: no exec-policy rules are loaded: commands are judged by the known-safe/"
                                    "dangerous heuristics alone, so e.g. `git reset --hard` runs without asking; add "
                                    "*.rules files to " + daemon.dir() + "/rules or set policy.include_default_rules = true\n"));
  auto json = nlohmann::json::parse(daemon.codexctl({"--json", "status"}).out, nullptr, false);
  ASSERT_FALSE(json.is_discarded());
  ASSERT_EQ(json["policy"]["warnings"].size(), 1u) << json.dump();
  EXPECT_THAT(json["policy"]["warnings"][0].get<std::string>(), HasSubstr("no exec-policy rules are loaded"));
  EXPECT_THAT(daemon.daemon_log(), HasSubstr("policy: no exec-policy rules are loaded"));
  EXPECT_EQ(daemon.stop(), 0) << daemon.daemon_log();
}

// The README tour's case: a command that may run, but writes where the sandbox does not let
// it. The hint says an approval does not lift the sandbox, and names --escalate.
TEST(CodexctlSandbox, ACommandTheSandboxRefusesGetsAHintThatNamesEscalate) {
  TestDaemon daemon;  // workspace-write
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto r = daemon.codexctl({"exec", "-C", daemon.workspace(), "--", "/bin/sh", "-c", "echo x > /usr/codexd-denied"});
  if (r.exit_code == 125) GTEST_SKIP() << "no sandbox here: " << r.err;
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("Read-only file system"));  // the command's own stderr, merged
  EXPECT_THAT(r.err, HasSubstr("codexctl: the output looks like the sandbox refused something: it keeps everything "
                               "outside its writable roots (and .git inside them) read-only, approved or not.\n"
                               "codexctl: if the command must write there, rerun it with --escalate: that asks a "
                               "reviewer to let it run without the sandbox.\n"));
  // --json: the sandboxed run's streams as text beside protobuf's base64 (invalid UTF-8 as U+FFFD).
  auto json_run = daemon.codexctl({"--json", "sandbox", "-C", daemon.workspace(), "--", "/bin/sh", "-c",
                                   "printf 'out\\n'; printf 'err\\377\\n' >&2"});
  auto json = nlohmann::json::parse(json_run.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << json_run.out << json_run.err;
  EXPECT_EQ(json["stdout_text"], "out\n");
  EXPECT_EQ(json["stderr_text"], "err\xEF\xBF\xBD\n");
  EXPECT_EQ(json["stdout"], "b3V0Cg==");
  // A failure that is not the sandbox's gets no hint.
  auto plain = daemon.codexctl({"exec", "-C", daemon.workspace(), "--", "/bin/sh", "-c", "exit 3"});
  EXPECT_EQ(plain.exit_code, 3);
  EXPECT_THAT(plain.err, Not(HasSubstr("--escalate")));
  EXPECT_EQ(daemon.stop(), 0) << daemon.daemon_log();
}

// `exec --tty` is a person's terminal: the session gets the caller's TERM and COLORTERM, like
// `docker exec -it`; without --tty the agents' TERM=dumb stays.
TEST_F(CodexctlTest, ExecTtyPassesTheCallersTerm) {
  auto with_term = [&](bool tty) {
    std::vector<std::string> argv = {"/usr/bin/env", "-u", "TERM", "-u", "COLORTERM", "TERM=xterm-256color",
                                     "COLORTERM=truecolor", TestDaemon::codexctl_binary(), "--socket",
                                     daemon_.socket_path(), "exec", "-C", daemon_.workspace()};
    if (tty) argv.push_back("--tty");
    argv.insert(argv.end(), {"--", "/bin/sh", "-c", "echo \"TERM=$TERM COLORTERM=$COLORTERM\""});
    return run_process(argv);
  };
  auto tty = with_term(true);
  EXPECT_EQ(tty.exit_code, 0) << tty.err;
  EXPECT_THAT(tty.out, HasSubstr("TERM=xterm-256color COLORTERM=truecolor"));
  auto pipes = with_term(false);
  EXPECT_EQ(pipes.exit_code, 0) << pipes.err;
  EXPECT_THAT(pipes.out, HasSubstr("TERM=dumb COLORTERM=\n"));
}

// Display columns (UTF-8 code points) before byte `pos`.
size_t column_of(const std::string& line, size_t pos) {
  size_t column = 0;
  for (size_t i = 0; i < pos && i < line.size(); ++i) column += (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80;
  return column;
}

// Every state (exited(143) is wider than running) and a long agent label keep the columns
// aligned; long cells are cut with an ellipsis, and --no-trunc prints them whole.
TEST_F(CodexctlTest, TheSessionsTableStaysAlignedAndCutsLongCellsUnlessNoTrunc) {
  Fifo go(daemon_.workspace(), "go");
  const int exited = detach({"/bin/sh", "-c", "read x < go; exit 143"});
  std::thread release([&] { go.write("x\n"); });
  auto attached = ctl({"attach", std::to_string(exited)});
  release.join();
  EXPECT_EQ(attached.exit_code, 143) << attached.err;
  const std::string long_arg(100, 'x');
  const std::string long_agent = "an-agent-label-longer-than-sixteen";
  auto started = ctl({"--agent-id", long_agent, "exec", "--detach", "-C", daemon_.workspace(), "--", "/bin/sh", "-c",
                      "sleep 1000", long_arg});
  ASSERT_EQ(started.exit_code, 0) << started.err;

  auto table = ctl({"sessions"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  std::vector<std::string> lines;
  std::istringstream in(table.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u) << table.out;
  const size_t command_column = column_of(lines[0], lines[0].find("COMMAND"));
  const size_t age_column = column_of(lines[0], lines[0].find(" AGE ") + 1);
  for (size_t i = 1; i < lines.size(); ++i) {
    SCOPED_TRACE(lines[i]);
    EXPECT_EQ(column_of(lines[i], lines[i].find("/bin/sh")), command_column);
    const size_t age = lines[i].find_first_of("0123456789", lines[i].find(i == 1 ? "an-agent" : "codexctl"));
    EXPECT_EQ(column_of(lines[i], age), age_column);
  }
  EXPECT_THAT(table.out, HasSubstr("exited(143)"));
  EXPECT_THAT(table.out, HasSubstr("an-agent-label-\u2026"));
  EXPECT_THAT(table.out, Not(HasSubstr(long_arg)));
  EXPECT_THAT(table.out, HasSubstr("xxx\u2026\n"));

  auto whole = ctl({"sessions", "--no-trunc"});
  EXPECT_THAT(whole.out, HasSubstr(long_agent));
  EXPECT_THAT(whole.out, HasSubstr(long_arg + "\n"));
}

TEST_F(CodexctlTest, ErrorsPrintTheDaemonsMessageAndExitNonZero) {
  auto relative = ctl({"exec", "-C", "relative", "--", "/bin/true"});
  EXPECT_EQ(relative.exit_code, 1);
  EXPECT_EQ(relative.err, "codexctl: `workdir` must be an absolute path (got \"relative\")\n");
  auto unknown = ctl({"attach", "99999"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_EQ(unknown.err, "codexctl: Unknown process id 99999\n");
  auto bad_write = ctl({"write", "99999", "x"});
  EXPECT_EQ(bad_write.exit_code, 1);
  EXPECT_EQ(bad_write.err, "codexctl: Unknown process id 99999\n");
  auto usage = ctl({"kill", "1234", "--signal", "hup"});
  EXPECT_EQ(usage.exit_code, 2);
  auto no_daemon = run_process({TestDaemon::codexctl_binary(), "--socket", daemon_.dir() + "/nothing.sock", "status"});
  EXPECT_EQ(no_daemon.exit_code, 1);
  EXPECT_THAT(no_daemon.err, HasSubstr("codexctl: cannot reach codexd at " + daemon_.dir() + "/nothing.sock"));
}

}  // namespace
}  // namespace codexd::testing
