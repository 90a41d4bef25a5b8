// Durable sessions: a daemon killed with SIGKILL, or stopped with SIGUSR1 for a planned
// restart, leaves its sessions to their shims; the next daemon adopts them under the same
// ids, with the same owner, agent and command, and their output continues by offset with no
// gap and no duplicate. A plain SIGTERM still ends them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

// Prints 0, 1, 2, ... one per line, a few ms apart, for as long as it lives: output that keeps
// coming while the daemon is away.
constexpr const char* kCounter = "i=0; while :; do echo $i; i=$((i+1)); sleep 0.005; done";

// Every byte of a session from offset `from` on, through Attach, until `enough(bytes)` holds.
std::string attach_until(v1::Exec::Stub& stub, int id, uint64_t from, const std::function<bool(const std::string&)>& enough) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  v1::AttachRequest request;
  request.set_session_id(id);
  request.set_from_offset(from);
  auto reader = stub.Attach(&context, request);
  std::string bytes;
  uint64_t expected = from;
  v1::OutputEvent event;
  while (reader->Read(&event)) {
    if (event.has_gap()) {
      ADD_FAILURE() << "gap [" << event.gap().from_offset() << ", " << event.gap().to_offset() << ")";
      break;
    }
    if (event.has_exit()) break;
    if (!event.has_output()) continue;
    EXPECT_EQ(event.output().offset(), expected) << "output out of order";
    expected = event.output().offset() + event.output().data().size();
    bytes += event.output().data();
    if (enough(bytes)) break;
  }
  // The counter never ends its stream: whatever stopped the loop (enough bytes, a gap), the
  // call is cancelled rather than left to its deadline.
  context.TryCancel();
  reader->Finish();
  return bytes;
}

// "0\n1\n...\nN\n" exactly (a prefix of the counter's output), or why not.
::testing::AssertionResult IsCounterPrefix(const std::string& text, int& last) {
  last = -1;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) break;  // a line still being written
    const std::string line = text.substr(at, nl - at);
    if (line != std::to_string(last + 1)) {
      return ::testing::AssertionFailure() << "after " << last << " came \"" << line << "\" at byte " << at;
    }
    ++last;
    at = nl + 1;
  }
  return ::testing::AssertionSuccess();
}

std::map<int, v1::SessionInfo> by_id(const std::vector<v1::SessionInfo>& list) {
  std::map<int, v1::SessionInfo> out;
  for (const auto& s : list) out[s.session_id()] = s;
  return out;
}

struct Started {
  int counter = 0;   // pipes, output all the time
  int tty = 0;       // cat on a terminal
  int exits = 0;     // exits with 7 while the daemon is away
  std::vector<int> idle;
};

Started start_sessions(v1::Exec::Stub& stub, const TestDaemon& daemon) {
  Started s;
  auto counter = exec_command(stub, shell_request(daemon, kCounter, 250));
  EXPECT_TRUE(counter.status.ok() && counter.result.has_session_id()) << describe(counter.status);
  s.counter = counter.result.session_id();
  auto tty_request = argv_request(daemon, {"/bin/cat"}, 250);
  tty_request.set_tty(true);
  auto tty = exec_command(stub, tty_request);
  EXPECT_TRUE(tty.status.ok() && tty.result.has_session_id()) << describe(tty.status);
  s.tty = tty.result.session_id();
  auto exits = exec_command(stub, argv_request(daemon, {"/bin/sh", "-c", "read x < go; echo bye; exit 7"}, 250));
  EXPECT_TRUE(exits.status.ok() && exits.result.has_session_id()) << describe(exits.status);
  s.exits = exits.result.session_id();
  for (int i = 0; i < 7; ++i) {
    auto idle = exec_command(stub, argv_request(daemon, {"/bin/sleep", "1000"}, 0));
    EXPECT_TRUE(idle.status.ok() && idle.result.has_session_id()) << describe(idle.status);
    s.idle.push_back(idle.result.session_id());
  }
  return s;
}

// How the next daemon comes: started by the test after the old one went, or by the old one
// itself (a restart in place: same pid, same socket).
enum class Comeback { kStartedAgain, kInPlace };

// Ten sessions, some output polled and some attached, then the daemon goes (`go_away`) and a
// new one starts on the same state: everything is still there and carries on.
void survives(const std::function<void(TestDaemon&)>& go_away, Comeback comeback = Comeback::kStartedAgain) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  Fifo go(daemon.workspace(), "go");
  auto stub = v1::Exec::NewStub(daemon.channel());
  Started s = start_sessions(*stub, daemon);
  if (::testing::Test::HasFailure()) return;
  {  // the terminal gets a size of its own, which the next daemon must know
    grpc::ClientContext context;
    v1::ResizeTerminalRequest resize;
    resize.set_session_id(s.tty);
    resize.set_rows(40);
    resize.set_cols(132);
    v1::ResizeTerminalResponse response;
    ASSERT_TRUE(stub->ResizeTerminal(&context, resize, &response).ok());
  }
  const auto before = by_id(list_sessions(*stub));
  ASSERT_EQ(before.at(s.tty).rows(), 40u);
  ASSERT_EQ(before.at(s.tty).cols(), 132u);
  ASSERT_EQ(before.size(), 10u);

  // The counter: some lines through Poll (so the daemon has delivered up to an offset) and
  // through an attached client.
  auto polled = poll(*stub, s.counter, 5'000);
  ASSERT_TRUE(polled.status.ok()) << describe(polled.status);
  const uint64_t delivered = polled.result.output_offset();
  std::string attached = attach_until(*stub, s.counter, 0, [](const std::string& b) { return b.size() > 200; });
  int last = -1;
  ASSERT_TRUE(IsCounterPrefix(attached, last));
  // The terminal echoes.
  ASSERT_TRUE(write_stdin(*stub, s.tty, "hello\n", 500).status.ok());

  stub.reset();
  go_away(daemon);
  go.write("x\n");  // the third session exits while no daemon runs (or once the new one runs)
  if (comeback == Comeback::kStartedAgain) {
    ASSERT_TRUE(daemon.restart()) << daemon.daemon_log();
  }
  stub = v1::Exec::NewStub(daemon.channel());

  // All ten, with the same ids, owners, agents and commands.
  const auto after = by_id(list_sessions(*stub));
  ASSERT_EQ(after.size(), 10u) << daemon.daemon_log();
  for (const auto& [id, was] : before) {
    ASSERT_TRUE(after.count(id)) << "session " << id << " was not adopted\n" << daemon.daemon_log();
    const auto& now = after.at(id);
    EXPECT_THAT(now.argv(), ::testing::ElementsAreArray(was.argv()));
    EXPECT_EQ(now.owner_uid(), was.owner_uid());
    EXPECT_EQ(now.agent_id(), was.agent_id());
    EXPECT_EQ(now.tty(), was.tty());
    EXPECT_EQ(now.rows(), was.rows()) << "session " << id;
    EXPECT_EQ(now.cols(), was.cols()) << "session " << id;
    EXPECT_EQ(now.workdir(), was.workdir());
    EXPECT_EQ(now.pid(), was.pid());
    EXPECT_EQ(now.started_at_unix_ms(), was.started_at_unix_ms());
    if (id != s.exits) {
      EXPECT_TRUE(now.running()) << "session " << id << " exit " << now.exit_code();
    }
  }

  // The counter's whole stream, from 0, byte for byte: what was produced before, while the
  // daemon was away, and after, with no gap and no duplicate.
  const size_t seen = attached.size();
  std::string whole = attach_until(*stub, s.counter, 0, [&](const std::string& b) { return b.size() > seen + 400; });
  ASSERT_TRUE(IsCounterPrefix(whole, last)) << whole.substr(0, 400);
  EXPECT_EQ(whole.substr(0, seen), attached);
  // The attached client reconnects from where it stopped and continues.
  std::string rest = attach_until(*stub, s.counter, seen, [](const std::string& b) { return b.size() > 100; });
  EXPECT_EQ(rest.substr(0, std::min(rest.size(), whole.size() - seen)), whole.substr(seen, rest.size()));
  // Poll resumes exactly where the last Poll before the restart stopped.
  auto next = poll(*stub, s.counter, 5'000);
  ASSERT_TRUE(next.status.ok()) << describe(next.status);
  ASSERT_GE(next.result.output_offset(), delivered + next.result.output().size());
  EXPECT_EQ(next.result.output_offset() - next.result.output().size(), delivered)
      << "Poll after the restart did not start at the offset delivered before it";

  // The one that exited while the daemon was away reports its real exit code.
  auto first = poll(*stub, s.exits, 5'000);
  ASSERT_TRUE(first.status.ok()) << describe(first.status);
  auto ended = first.result.has_exit_code() ? Followed{first.result.output(), first.result, true, {}}
                                            : follow_until_exit(*stub, first.result);
  ASSERT_TRUE(ended.status.ok()) << describe(ended.status);
  EXPECT_EQ(ended.last.exit_code(), 7);
  EXPECT_THAT(first.result.output() + ended.output, ::testing::HasSubstr("bye\n"));

  // The terminal still works: what was echoed before, then new input.
  auto echoed = write_stdin(*stub, s.tty, "again\n", 1000);
  ASSERT_TRUE(echoed.status.ok()) << describe(echoed.status);
  auto more = follow_until_output(*stub, echoed.result, "again");
  EXPECT_THAT(echoed.result.output() + more.output, ::testing::HasSubstr("again"));

  // The adopted sessions can be ended like any other.
  bool was_running = false;
  ASSERT_TRUE(cancel(*stub, s.idle[0], v1::CancelRequest::KILL, std::nullopt, &was_running).ok());
  EXPECT_TRUE(was_running);
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
  // A restarted daemon still owns the socket file it created and removes it when it stops.
  EXPECT_FALSE(std::filesystem::exists(daemon.socket_path())) << daemon.daemon_log();
}

TEST(DurableSessions, TenSessionsSurviveADaemonKilledWithSigkill) {
  survives([](TestDaemon& daemon) { EXPECT_EQ(daemon.crash(), 128 + SIGKILL); });
}

TEST(DurableSessions, TenSessionsSurviveAPlannedRestartWithSigusr1) {
  survives([](TestDaemon& daemon) { EXPECT_EQ(daemon.stop_with(SIGUSR1), 0); });
}

// `codexctl daemon restart`: the daemon execs its binary again in the same process, keeps
// the listening socket (no client sees it missing) and adopts its own sessions.
TEST(DurableSessions, TenSessionsSurviveARestartInPlaceWithCodexctl) {
  survives(
      [](TestDaemon& daemon) {
        const pid_t pid = daemon.pid();
        auto restarted = daemon.codexctl({"daemon", "restart"});
        EXPECT_EQ(restarted.exit_code, 0) << restarted.out << restarted.err << daemon.daemon_log();
        EXPECT_THAT(restarted.out, ::testing::HasSubstr("keeping 10 session(s)"));
        EXPECT_THAT(restarted.out, ::testing::HasSubstr("10 session(s) adopted"));
        EXPECT_EQ(get_status(daemon.channel()).pid(), pid);
        EXPECT_THAT(daemon.daemon_log(), ::testing::HasSubstr("codexd stopped for a restart in place"));
      },
      Comeback::kInPlace);
}

// SIGUSR2 is the same restart, for scripts and package hooks without codexctl.
TEST(DurableSessions, Sigusr2RestartsInPlaceKeepingTheSessions) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto stub = v1::Exec::NewStub(daemon.channel());
  auto counter = exec_command(*stub, shell_request(daemon, kCounter, 250));
  ASSERT_TRUE(counter.status.ok() && counter.result.has_session_id()) << describe(counter.status);
  const int64_t first_start = get_status(daemon.channel()).started_at_unix_ms();
  stub.reset();

  ASSERT_TRUE(daemon.signal_and_wait_ready(SIGUSR2)) << daemon.daemon_log();
  const auto status = get_status(daemon.channel());
  EXPECT_GT(status.started_at_unix_ms(), first_start);
  EXPECT_EQ(status.pid(), daemon.pid());
  EXPECT_EQ(status.adoption().adopted(), 1u) << daemon.daemon_log();
  stub = v1::Exec::NewStub(daemon.channel());
  int last = -1;
  EXPECT_TRUE(IsCounterPrefix(attach_until(*stub, counter.result.session_id(), 0,
                                           [](const std::string& b) { return b.size() > 300; }),
                              last));
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

// Everything the new image would read is checked first: a broken config or rules file, or a
// config that would orphan the sessions, refuses the restart and the daemon goes on serving.
TEST(DurableSessions, ARestartThatCouldNotStartIsRefusedAndNothingChanges) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto stub = v1::Exec::NewStub(daemon.channel());
  auto idle = exec_command(*stub, argv_request(daemon, {"/bin/sleep", "1000"}, 0));
  ASSERT_TRUE(idle.status.ok() && idle.result.has_session_id()) << describe(idle.status);
  const auto before = get_status(daemon.channel());
  const std::string config_path = daemon.dir() + "/codexd.toml";
  const std::string good_config = [&] {
    std::ifstream in(config_path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();

  std::ofstream(config_path, std::ios::app) << "[exec]\ndurable_sessions = \"yes\"\n";
  auto bad_config = daemon.codexctl({"daemon", "restart"});
  EXPECT_EQ(bad_config.exit_code, 1);
  EXPECT_THAT(bad_config.err, ::testing::HasSubstr("restart refused, the daemon keeps running"));
  EXPECT_THAT(bad_config.err, ::testing::ContainsRegex("codexd\\.toml:[0-9]+:[0-9]+"));

  std::ofstream(config_path, std::ios::trunc) << good_config << "[exec]\ndurable_sessions = false\n";
  auto orphaning = daemon.codexctl({"daemon", "restart"});
  EXPECT_EQ(orphaning.exit_code, 1);
  EXPECT_THAT(orphaning.err, ::testing::HasSubstr("would not adopt the 1 running session(s)"));

  std::ofstream(config_path, std::ios::trunc) << good_config;
  std::ofstream(daemon.dir() + "/rules/broken.rules") << "prefix_rule(pattern = [\"git\"], decision = \"maybe\")\n";
  auto bad_rules = daemon.codexctl({"daemon", "restart"});
  EXPECT_EQ(bad_rules.exit_code, 1);
  EXPECT_THAT(bad_rules.err, ::testing::ContainsRegex("broken\\.rules:1:[0-9]+"));

  // Still the same daemon, with its session.
  const auto after = get_status(daemon.channel());
  EXPECT_EQ(after.started_at_unix_ms(), before.started_at_unix_ms());
  EXPECT_EQ(after.sessions_live(), 1u);
  EXPECT_THAT(daemon.daemon_log(), ::testing::Not(::testing::HasSubstr("restart in place:")));

  // And with the files mended, it restarts. (A connection open across the restart is closed
  // under its client, which must connect again: gRPC's shared subchannel would reuse it.)
  stub.reset();
  std::filesystem::remove(daemon.dir() + "/rules/broken.rules");
  auto mended = daemon.codexctl({"daemon", "restart"});
  EXPECT_EQ(mended.exit_code, 0) << mended.err << daemon.daemon_log();
  EXPECT_EQ(get_status(daemon.channel()).sessions_live(), 1u) << daemon.daemon_log();
  EXPECT_EQ(daemon.stop(), 0);
}

// Only an admin may restart the daemon; anyone else changes nothing.
TEST(DurableSessions, OnlyAnAdminMayRestartTheDaemon) {
  auto options = unsandboxed();
  options.socket_mode = "0666";
  options.socket_dir_mode = "0755";
  TestDaemon daemon(options);
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  const auto before = get_status(daemon.channel());
  auto refused = daemon.codexctl({"daemon", "restart"}, "", /*as_uid=*/65534);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, ::testing::HasSubstr("restarting the daemon needs an admin uid"));
  EXPECT_EQ(get_status(daemon.channel()).started_at_unix_ms(), before.started_at_unix_ms());
  EXPECT_EQ(daemon.stop(), 0);
}

TEST(DurableSessions, APlainStopStillEndsEverySessionAndItsShim) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto stub = v1::Exec::NewStub(daemon.channel());
  // Two quiet sessions and one that writes without pause: its shim always has output queued
  // that the stopping daemon has not read, and the kernel reports that to the shim as a reset
  // before the daemon's last message (a shim that stopped reading there kept its command).
  for (const char* command : {"sleep 1000", "sleep 1000", "exec yes"}) {
    auto call = exec_command(*stub, argv_request(daemon, {"/bin/sh", "-c", command}, 0));
    ASSERT_TRUE(call.status.ok() && call.result.has_session_id()) << describe(call.status);
  }
  std::vector<pid_t> pids;
  for (const auto& s : list_sessions(*stub)) pids.push_back(s.pid());
  ASSERT_EQ(pids.size(), 3u);
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
  // The commands are gone (their shims killed and reaped them before the daemon exited), and
  // the daemon saw each shim end rather than giving up waiting for it.
  for (pid_t pid : pids) EXPECT_NE(::kill(pid, 0), 0) << pid;
  EXPECT_THAT(daemon.daemon_log(), ::testing::Not(::testing::HasSubstr("had not ended")));
  ASSERT_TRUE(daemon.restart()) << daemon.daemon_log();
  stub = v1::Exec::NewStub(daemon.channel());
  EXPECT_TRUE(list_sessions(*stub).empty());
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

TEST(DurableSessions, ACorruptRecordIsReportedAndItsCommandEndedNotAdopted) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto stub = v1::Exec::NewStub(daemon.channel());
  auto good = exec_command(*stub, argv_request(daemon, {"/bin/sleep", "1000"}, 0));
  auto bad = exec_command(*stub, argv_request(daemon, {"/bin/sleep", "1001"}, 0));
  ASSERT_TRUE(good.result.has_session_id() && bad.result.has_session_id());
  pid_t bad_pid = 0;
  for (const auto& s : list_sessions(*stub)) {
    if (s.session_id() == bad.result.session_id()) bad_pid = s.pid();
  }
  stub.reset();
  EXPECT_EQ(daemon.crash(), 128 + SIGKILL);
  const std::string record = daemon.dir() + "/state/sessions/" + std::to_string(bad.result.session_id()) + "/session.json";
  { std::ofstream(record, std::ios::trunc) << "{\"version\": 1, \"id\": "; }  // truncated
  ASSERT_TRUE(daemon.restart()) << daemon.daemon_log();
  stub = v1::Exec::NewStub(daemon.channel());
  auto sessions = list_sessions(*stub);
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0].session_id(), good.result.session_id());
  EXPECT_THAT(daemon.daemon_log(), ::testing::HasSubstr("not adopted: session " + std::to_string(bad.result.session_id())));
  EXPECT_THAT(daemon.daemon_log(), ::testing::HasSubstr("not a JSON object"));
  EXPECT_NE(::kill(bad_pid, 0), 0) << "the unowned command still runs";
  // Listed as lost, with why, in the status (over gRPC and as codexctl prints it).
  const std::string lost = "session " + std::to_string(bad.result.session_id()) + ": ";
  auto status = get_status(daemon.channel());
  EXPECT_EQ(status.adoption().adopted(), 1u);
  ASSERT_EQ(status.adoption().lost_size(), 1);
  EXPECT_THAT(status.adoption().lost(0), ::testing::StartsWith(lost));
  EXPECT_THAT(status.adoption().lost(0), ::testing::HasSubstr("not a JSON object"));
  auto printed = daemon.codexctl({"status"});
  EXPECT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_THAT(printed.out, ::testing::HasSubstr("adopted at start: 1"));
  EXPECT_THAT(printed.out, ::testing::HasSubstr("lost at start: " + lost));
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

// The next daemon takes over the session's cgroup, not just its process group: accounting
// goes on, and a kill reaches a grandchild that left the process group with setsid.
TEST(DurableSessions, AnAdoptedSessionKeepsItsCgroupAccountingAndWholeTreeKill) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto status = get_status(daemon.channel());
  if (status.limits().mechanism().rfind("cgroup", 0) != 0) GTEST_SKIP() << "no usable cgroup: " << status.limits().reason();
  auto stub = v1::Exec::NewStub(daemon.channel());
  auto started = exec_command(
      *stub, argv_request(daemon, {"/bin/sh", "-c", "setsid sleep 1000 & echo grandchild=$!; exec sleep 1000"}, 250));
  ASSERT_TRUE(started.status.ok() && started.result.has_session_id()) << describe(started.status);
  const int id = started.result.session_id();
  auto seen = follow_until_output(*stub, started.result, "\n");
  const std::string out = started.result.output() + seen.output;
  const auto at = out.find("grandchild=");
  ASSERT_NE(at, std::string::npos) << out;
  const pid_t grandchild = static_cast<pid_t>(std::stoi(out.substr(at + 11)));
  const auto before = list_sessions(*stub).at(0);
  ASSERT_TRUE(before.usage().measured());
  stub.reset();

  EXPECT_EQ(daemon.crash(), 128 + SIGKILL);
  ASSERT_TRUE(daemon.restart()) << daemon.daemon_log();
  stub = v1::Exec::NewStub(daemon.channel());
  const auto after = list_sessions(*stub);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_TRUE(after[0].usage().measured()) << "the adopted session lost its accounting";
  EXPECT_GE(after[0].usage().peak_memory_bytes(), before.usage().peak_memory_bytes());
  EXPECT_THAT(daemon.daemon_log(), ::testing::Not(::testing::HasSubstr("without its resource group")));

  bool was_running = false;
  ASSERT_TRUE(cancel(*stub, id, v1::CancelRequest::KILL, std::nullopt, &was_running).ok());
  EXPECT_TRUE(was_running);
  EXPECT_TRUE(wait_process_exit(grandchild)) << "the setsid grandchild outlived the kill of its adopted session";
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

// A record naming a cgroup outside the daemon's session groups does not hand it over: the
// session is adopted with its process group only, and the log says why.
TEST(DurableSessions, ARecordNamingAForeignCgroupIsAdoptedWithoutIt) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  auto status = get_status(daemon.channel());
  if (status.limits().mechanism().rfind("cgroup", 0) != 0) GTEST_SKIP() << "no usable cgroup: " << status.limits().reason();
  auto stub = v1::Exec::NewStub(daemon.channel());
  auto started = exec_command(*stub, argv_request(daemon, {"/bin/sleep", "1000"}, 0));
  ASSERT_TRUE(started.status.ok() && started.result.has_session_id()) << describe(started.status);
  stub.reset();
  EXPECT_EQ(daemon.crash(), 128 + SIGKILL);
  const std::string record =
      daemon.dir() + "/state/sessions/" + std::to_string(started.result.session_id()) + "/session.json";
  std::string text;
  {
    std::ifstream in(record);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::regex group("\"group\": *\"[^\"]*\"");
  ASSERT_TRUE(std::regex_search(text, group)) << text;
  std::ofstream(record, std::ios::trunc) << std::regex_replace(text, group, "\"group\":\"sessions/../..\"");
  ASSERT_TRUE(daemon.restart()) << daemon.daemon_log();
  stub = v1::Exec::NewStub(daemon.channel());
  EXPECT_EQ(list_sessions(*stub).size(), 1u);
  EXPECT_THAT(daemon.daemon_log(), ::testing::HasSubstr("adopted without its resource group (not a session group of this daemon"));
  stub.reset();
  EXPECT_EQ(daemon.stop(), 0);
}

}  // namespace
}  // namespace codexd::testing
