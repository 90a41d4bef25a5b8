// Exec supervision over a real daemon and a real sandbox (issue 15): every program a sandboxed
// command starts is checked against the rules, however it is started, and recorded in the
// audit log with its parent.
#include <signal.h>
#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/approvals/approvals_test_util.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"
#include "tests/support/fs_wait.h"
#include "tests/support/test_stage.h"

namespace codexd::testing::approvals {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kRules = R"(
prefix_rule(pattern=["touch", "forbidden-marker"], decision="forbidden", justification="markers are not for agents")
prefix_rule(pattern=["touch", "asked-marker"], decision="prompt", justification="ask first")
)";

std::vector<nlohmann::json> exec_lines(const std::string& audit_path) {
  std::vector<nlohmann::json> out;
  std::istringstream in(slurp(audit_path));
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("tool", "") == "exec") out.push_back(j);
  }
  return out;
}

TestDaemonOptions supervised(const std::string& mode, const std::string& approval_policy = "on-request") {
  TestDaemonOptions o;
  o.approval_policy = approval_policy;
  o.rules = kRules;
  o.extra_config = "[exec]\nexec_supervision = \"" + mode + "\"\n";
  o.socket_mode = "0666";  // another uid asks for a trace
  o.socket_dir_mode = "0755";
  return o;
}

class ExecSupervision : public DaemonTest {
 protected:
  ExecSupervision() : DaemonTest(supervised("enforce")) {}
  void SetUp() override {
    DaemonTest::SetUp();
    if (!daemon_.started()) GTEST_SKIP() << "the daemon did not start";
    auto status = agent_.exec_ok(exec_request(daemon_.workspace(), {"/bin/true"}));
    if (status.has_rejection() && status.rejection().message().find("exec supervision") != std::string::npos) {
      GTEST_SKIP() << "this kernel cannot supervise execs: " << status.rejection().message();
    }
  }
  std::string failure_context() const override { return "\naudit log:\n" + slurp(daemon_.audit_log_path()); }

  // Runs `script` under sh in the workspace; its output and exit code.
  v1::ExecResult script(const std::string& text) { return agent_.exec_ok(exec_script(daemon_.workspace(), text)); }
  // The refused exec lines of `program` (path ending in it) once the audit log has them.
  std::vector<nlohmann::json> refused(const std::string& program) {
    std::vector<nlohmann::json> found;
    wait_for_dir_change(daemon_.dir(), [&] {
      found.clear();
      for (const auto& j : exec_lines(daemon_.audit_log_path())) {
        const std::string path = j["path"];
        if (j["outcome"] == "refused" && path.size() >= program.size() &&
            path.compare(path.size() - program.size(), program.size(), program) == 0) {
          found.push_back(j);
        }
      }
      return !found.empty();
    }, kGuard);
    return found;
  }
  std::string marker(const std::string& name) const { return daemon_.workspace() + "/" + name; }

  Client agent_{daemon_, "agent-a"};
};

// A Makefile whose target runs `recipe`: the command the agent sends (`make target`) names
// nothing the rules know, so only the nested exec can be decided.
void write_makefile(const std::string& dir, const std::string& recipe) {
  std::ofstream(dir + "/Makefile") << "target:\n\t" << recipe << "\n";
}

TEST_F(ExecSupervision, AForbiddenProgramStartedByMakeFailsAtItsExecWithTheRuleInTheOutput) {
  std::ofstream(daemon_.workspace() + "/Makefile") << "deploy:\n\ttouch forbidden-marker\n\techo not reached\n";
  v1::ExecResult result = agent_.exec_ok(exec_request(daemon_.workspace(), {"make", "deploy"}));
  EXPECT_NE(result.exit_code(), 0) << result.output();
  EXPECT_THAT(result.output(), HasSubstr("codexd: refused to run /usr/bin/touch: forbidden by prefix_rule(touch forbidden-marker) at "));
  EXPECT_THAT(result.output(), HasSubstr("test.rules:2:1: markers are not for agents"));
  EXPECT_THAT(result.output(), Not(HasSubstr("not reached")));
  EXPECT_FALSE(exists(marker("forbidden-marker")));
  auto lines = refused("/touch");
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0]["decision"], "forbidden");
  EXPECT_EQ(lines[0]["argv"], nlohmann::json::array({"touch", "forbidden-marker"}));
  EXPECT_EQ(lines[0]["agent_id"], "agent-a");
  EXPECT_THAT(lines[0]["rule"].get<std::string>(), HasSubstr("test.rules:2:1"));
}

TEST_F(ExecSupervision, EveryWayOfStartingAProgramIsSeen) {
  const std::string script_path = daemon_.workspace() + "/mark.sh";
  std::ofstream(script_path) << "#!/bin/sh\nexec touch forbidden-marker\n";
  ::chmod(script_path.c_str(), 0755);
  const std::map<std::string, std::string> ways = {
      {"env", "env touch forbidden-marker"},
      {"xargs", "echo forbidden-marker | xargs touch"},
      {"find -exec", "find . -maxdepth 0 -exec touch forbidden-marker ';'"},
      {"python os.execv", "python3 -c 'import os; os.execv(\"/usr/bin/touch\", [\"touch\", \"forbidden-marker\"])'"},
      {"shebang script", "./mark.sh"},
      {"argv[0] that lies", "python3 -c 'import os; os.execv(\"/usr/bin/touch\", [\"innocent\", \"forbidden-marker\"])'"},
      {"fexecve of a memfd copy",
       "python3 -c 'import os; fd = os.memfd_create(\"copy\"); os.write(fd, open(\"/usr/bin/touch\", \"rb\").read()); "
       "os.execve(fd, [\"touch\", \"forbidden-marker\"], {})'"},
  };
  for (const auto& [way, text] : ways) {
    v1::ExecResult result = script(text);
    EXPECT_THAT(result.output(), HasSubstr("codexd: refused to run")) << way;
    EXPECT_FALSE(exists(marker("forbidden-marker"))) << way << " created the marker";
  }
  // The script itself is the program its exec names: refused as ./mark.sh runs touch.
  EXPECT_GE(refused("/touch").size(), ways.size()) << "each way's exec of touch was refused";
}

TEST_F(ExecSupervision, AStaticBinaryIsSeenToo) {
  // codexd-sandbox-helper is a static-pie binary: nothing in it goes through a libc wrapper.
  const std::string helper = staged_program("codexd-sandbox-helper");
  v1::ExecResult result = script("cp " + helper + " ./static-helper && ./static-helper --self-test >/dev/null; echo done");
  EXPECT_THAT(result.output(), HasSubstr("done"));
  bool seen = false;
  wait_for_dir_change(daemon_.dir(), [&] {
    for (const auto& j : exec_lines(daemon_.audit_log_path())) seen = seen || j["path"].get<std::string>().find("static-helper") != std::string::npos;
    return seen;
  }, kGuard);
  EXPECT_TRUE(seen) << "the static binary's exec was recorded";
}

TEST_F(ExecSupervision, TheTraceOfAPipelineHasExactlyItsProgramsWithTheirParents) {
  v1::ExecResult result = script("ls | wc -l; true");
  ASSERT_EQ(result.exit_code(), 0) << result.output();
  std::vector<nlohmann::json> lines;
  wait_for_dir_change(daemon_.dir(), [&] {
    lines.clear();
    for (const auto& j : exec_lines(daemon_.audit_log_path())) {
      if (j["argv"].empty() || j["argv"][0] == "/bin/true") continue;  // the SetUp probe
      lines.push_back(j);
    }
    return lines.size() >= 3;
  }, kGuard);
  ASSERT_EQ(lines.size(), 3u) << "the shell, ls and wc; true is a builtin";
  std::map<std::string, nlohmann::json> by_program;
  for (const auto& j : lines) by_program[j["path"].get<std::string>().substr(j["path"].get<std::string>().rfind('/') + 1)] = j;
  ASSERT_EQ(by_program.count("ls"), 1u);
  ASSERT_EQ(by_program.count("wc"), 1u);
  const auto& shell = lines[0];
  EXPECT_TRUE(shell["command"].get<bool>()) << "the first exec is the command itself";
  EXPECT_EQ(by_program["ls"]["parent_pid"], shell["pid"]);
  EXPECT_EQ(by_program["wc"]["parent_pid"], shell["pid"]);
  EXPECT_EQ(by_program["ls"]["outcome"], "ran");
}

TEST_F(ExecSupervision, StatusSaysWhatIsConfiguredAndWhetherThisKernelCanDoIt) {
  ProcessResult status = daemon_.codexctl({"status"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_THAT(status.out, HasSubstr("execs:     supervision enforce (available here: seccomp user notification)"));
}

// codexctl trace: the tree as it happened, also as JSON; to another uid a trace that exists
// is as unknown as one that does not.
TEST_F(ExecSupervision, TheTraceCommandShowsTheTreeToItsOwnerOnly) {
  ASSERT_EQ(script("ls | wc -l; true").exit_code(), 0);
  int session = 0;
  wait_for_dir_change(daemon_.dir(), [&] {
    for (const auto& j : exec_lines(daemon_.audit_log_path())) {
      if (j["command"] == true && j["argv"].size() == 3 && j["argv"][2] == "ls | wc -l; true") session = j["session_id"];
    }
    return session != 0;
  }, kGuard);
  ASSERT_NE(session, 0) << "the shell's exec line";
  ProcessResult text = daemon_.codexctl({"trace", std::to_string(session)});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("exec supervision enforce, 3 exec(s), ended"));
  EXPECT_THAT(text.out, ::testing::ContainsRegex("\n +\\+[0-9.]+s +[0-9]+  /bin/bash -c 'ls \\| wc -l; true' +command\n"));
  EXPECT_THAT(text.out, ::testing::ContainsRegex("\n +\\+[0-9.]+s +[0-9]+    ls +ran\n"));
  EXPECT_THAT(text.out, ::testing::ContainsRegex("\n +\\+[0-9.]+s +[0-9]+    wc -l +ran\n"));
  ProcessResult json = daemon_.codexctl({"--json", "trace", std::to_string(session)});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto parsed = nlohmann::json::parse(json.out);
  ASSERT_EQ(parsed["execs"].size(), 3u) << json.out;
  EXPECT_EQ(parsed["execs"][1]["traced_parent_pid"], parsed["execs"][0]["pid"]);

  const std::string unknown = "no exec trace for session ";
  ProcessResult missing = daemon_.codexctl({"trace", "999999"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_THAT(missing.err, HasSubstr(unknown + "999999:"));
  ChannelAsUid nobody(daemon_.socket_path(), 65534);
  ASSERT_TRUE(nobody.ok());
  auto stub = v1::Exec::NewStub(nobody.channel());
  grpc::ClientContext context;
  v1::GetTraceRequest request;
  request.set_session_id(session);
  v1::GetTraceResponse response;
  grpc::Status status = stub->GetTrace(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr(unknown + std::to_string(session) + ":"));
  grpc::ClientContext bad_context;
  request.set_session_id(-1);
  EXPECT_EQ(stub->GetTrace(&bad_context, request, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ExecSupervision, APromptRuleForANestedProgramAsksAReviewerWhoseAnswerDecides) {
  Reviewer reviewer(daemon_);
  reviewer.synced();
  write_makefile(daemon_.workspace(), "-touch asked-marker");
  for (const bool approve : {true, false}) {
    auto call = exec_async(agent_, exec_request(daemon_.workspace(), {"make", "target"}));
    auto asked = reviewer.added();
    EXPECT_THAT(asked.reason().message(), HasSubstr("nested exec of /usr/bin/touch"));
    EXPECT_THAT(asked.reason().message(), HasSubstr("touch asked-marker"));
    ASSERT_TRUE(asked.has_nested()) << asked.DebugString();
    EXPECT_EQ(asked.nested().path(), "/usr/bin/touch");
    EXPECT_EQ(asked.nested().parent_command(), "make target");
    EXPECT_GT(asked.nested().session_id(), 0);
    EXPECT_GT(asked.nested().pid(), 0);
    ProcessResult listed = daemon_.codexctl({"approvals", "list"});
    EXPECT_THAT(listed.out, HasSubstr("execs /usr/bin/touch inside session " + std::to_string(asked.nested().session_id()) +
                                      ", started as make target (its sandbox stays as it is)"));
    ASSERT_TRUE(reviewer.resolve(asked.approval_id(), approve ? v1::APPROVED : v1::DENIED).ok());
    EXPECT_EQ(reviewer.resolved().approval_id(), asked.approval_id());
    ASSERT_TRUE(call->wait());
    EXPECT_EQ(exists(marker("asked-marker")), approve) << call->response().DebugString();
    if (!approve) {
      EXPECT_THAT(call->response().output(), HasSubstr("codexd: refused to run /usr/bin/touch: a reviewer denied it"));
    }
    ::unlink(marker("asked-marker").c_str());
  }
}

// The shim keeps the sandbox's handover, listener included, for the next daemon: a nested
// exec after a restart waits for that daemon and is decided by it (not taken for the command).
TEST_F(ExecSupervision, ASessionKeptAcrossARestartIsStillSupervisedByTheNextDaemon) {
  const std::string fifo = daemon_.workspace() + "/go";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  write_makefile(daemon_.workspace(), "read a < go; touch forbidden-marker; echo after=$$?");
  auto stub = v1::Exec::NewStub(daemon_.channel());
  ExecCall started = exec_command(*stub, argv_request(daemon_, {"make", "target"}, 250));
  ASSERT_TRUE(started.status.ok()) << describe(started.status);
  ASSERT_TRUE(started.result.has_session_id()) << started.result.DebugString();
  stub.reset();  // its connection would be reused after the restart, already broken
  ASSERT_EQ(daemon_.stop_with(SIGUSR1), 0);
  ASSERT_TRUE(daemon_.restart()) << daemon_.daemon_log();
  std::ofstream(fifo) << "go\n";
  // A subchannel of its own: the fixture's clients still hold the one to the stopped daemon.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto next = v1::Exec::NewStub(grpc::CreateCustomChannel("unix:" + daemon_.socket_path(), grpc::InsecureChannelCredentials(), args));
  Followed followed = follow_until_exit(*next, started.result);
  ASSERT_TRUE(followed.exited) << describe(followed.status) << " " << followed.last.DebugString();
  EXPECT_THAT(followed.output, HasSubstr("codexd: refused to run /usr/bin/touch: forbidden by"));
  EXPECT_THAT(followed.output, HasSubstr("after=126"));
  EXPECT_FALSE(exists(marker("forbidden-marker")));
}

// Under supervision the filter's one listener is the keeper's, which relays the execs and
// still performs chmod and chown: inside the workspace they work (chmod +x, then run it), on
// the host's device nodes that bwrap binds into /dev (owned by a root command) they are
// refused. Before the relay the daemon held the listener and no keeper ran: a chmod of
// /dev/full changed the host's node. The host's mode is put back if the refusal failed.
TEST_F(ExecSupervision, ChmodWorksInTheWorkspaceAndNoHostDeviceNodeChanges) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: only root owns the host's device nodes";
  struct stat before;
  ASSERT_EQ(::stat("/dev/full", &before), 0);
  v1::ExecResult result = script(
      "chmod 600 /dev/full; echo chmod=$?; chown 0:0 /dev/full; echo chown=$?; "
      "printf '#!/bin/sh\\necho built\\n' > build.sh; chmod +x build.sh && ./build.sh");
  struct stat after;
  ASSERT_EQ(::stat("/dev/full", &after), 0);
  if ((after.st_mode & 07777) != (before.st_mode & 07777)) ::chmod("/dev/full", before.st_mode & 07777);
  EXPECT_EQ(after.st_mode & 07777, before.st_mode & 07777) << "ESCAPE: the host's /dev/full changed mode";
  EXPECT_THAT(result.output(), HasSubstr("chmod=1"));
  EXPECT_THAT(result.output(), HasSubstr("chown=1"));
  EXPECT_THAT(result.output(), HasSubstr("built")) << "chmod +x in the workspace under supervision";
}

// The newest filter's listener hears an exec first: one made inside would answer in the
// daemon's place. Making one is refused; a plain filter (what sandboxed tools install) is not.
TEST_F(ExecSupervision, NothingInsideCanMakeAListenerOfItsOwn) {
  const std::string probe = R"(
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
class Insn(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Insn))]
allow = (Insn * 1)(Insn(0x06, 0, 0, 0x7fff0000))
prog = Prog(1, allow)
SECCOMP_SET_MODE_FILTER, NEW_LISTENER = 1, 8
r = libc.syscall(317, SECCOMP_SET_MODE_FILTER, NEW_LISTENER, ctypes.byref(prog))
print("listener" if r >= 0 else "listener refused errno=%d" % ctypes.get_errno())
r = libc.syscall(317, SECCOMP_SET_MODE_FILTER, 0, ctypes.byref(prog))
print("plain filter ok" if r == 0 else "plain filter errno=%d" % ctypes.get_errno())
)";
  std::ofstream(daemon_.workspace() + "/probe.py") << probe;
  v1::ExecResult result = agent_.exec_ok(exec_request(daemon_.workspace(), {"python3", "probe.py"}));
  EXPECT_THAT(result.output(), HasSubstr("listener refused errno=1"));
  EXPECT_THAT(result.output(), HasSubstr("plain filter ok"));
}

// What the daemon reads comes from a hostile process: an argv pointer into nowhere is refused
// (nothing can be decided about it), a huge argv is decided on its first words, and the
// daemon goes on serving.
TEST_F(ExecSupervision, HostileExecArgumentsAreRefusedOrDecidedAndTheDaemonGoesOn) {
  const std::string probe = R"(
import ctypes, os, subprocess
libc = ctypes.CDLL(None, use_errno=True)
pid = os.fork()
if pid == 0:
    libc.execve(b"/bin/true", ctypes.c_void_p(16), None)
    os._exit(100 + ctypes.get_errno())
_, status = os.waitpid(pid, 0)
print("bad argv pointer: errno", os.WEXITSTATUS(status) - 100)
try:
    subprocess.run(["touch", "forbidden-marker"] + ["x" * 200] * 2000)
    print("huge argv: ran")
except PermissionError:
    print("huge argv: refused")
)";
  std::ofstream(daemon_.workspace() + "/hostile.py") << probe;
  v1::ExecResult result = agent_.exec_ok(exec_request(daemon_.workspace(), {"python3", "hostile.py"}));
  EXPECT_THAT(result.output(), HasSubstr("bad argv pointer: errno 13"));  // EACCES: refused, not run
  EXPECT_THAT(result.output(), HasSubstr("codexd: refused to run /bin/true: its program and arguments could not be read"));
  EXPECT_THAT(result.output(), HasSubstr("huge argv: refused"));
  EXPECT_FALSE(exists(marker("forbidden-marker")));
  expect_serving(daemon_);
}

// Forty processes released at once all exec: the daemon takes every waiting exec, not one per
// wake-up (several arriving together make one edge of the listener).
TEST_F(ExecSupervision, ExecsArrivingTogetherAreAllAnswered) {
  const std::string burst = R"(
import os
r, w = os.pipe()
kids = []
for i in range(40):
    pid = os.fork()
    if pid == 0:
        os.close(w)
        os.read(r, 1)
        os.execv("/bin/true", ["true"])
    kids.append(pid)
os.close(r)
os.close(w)
for pid in kids:
    os.waitpid(pid, 0)
print("all", len(kids), "ran")
)";
  std::ofstream(daemon_.workspace() + "/burst.py") << burst;
  for (int round = 0; round < 3; ++round) {
    v1::ExecResult result = agent_.exec_ok(exec_request(daemon_.workspace(), {"python3", "burst.py"}));
    EXPECT_THAT(result.output(), HasSubstr("all 40 ran")) << "round " << round;
  }
}

TEST_F(ExecSupervision, AThousandNestedExecsRunAndTheDaemonAnswersMeanwhile) {
  auto loop = exec_async(agent_, exec_script(daemon_.workspace(), "i=0; while [ $i -lt 1000 ]; do /bin/true; i=$((i+1)); done; echo finished $i"));
  Client other(daemon_, "agent-b");
  v1::ExecResult quick = other.exec_ok(exec_request(daemon_.workspace(), {"/bin/echo", "still serving"}));
  EXPECT_THAT(quick.output(), HasSubstr("still serving"));
  ASSERT_TRUE(loop->wait());
  EXPECT_THAT(loop->response().output(), HasSubstr("finished 1000"));
}

// The Landlock backend (no bwrap, the helper run directly) supervises the same way.
class ExecSupervisionLandlock : public DaemonTest {
 protected:
  static TestDaemonOptions options() {
    TestDaemonOptions o = supervised("enforce");
    o.sandbox_config = "backend = \"landlock\"";
    return o;
  }
  ExecSupervisionLandlock() : DaemonTest(options()) {}
  Client agent_{daemon_, "agent-a"};
};

TEST_F(ExecSupervisionLandlock, AForbiddenNestedProgramIsRefusedThere) {
  ASSERT_TRUE(daemon_.started());
  write_makefile(daemon_.workspace(), "touch forbidden-marker; echo rc=$$?");
  v1::ExecResult result = agent_.exec_ok(exec_request(daemon_.workspace(), {"make", "target"}));
  if (result.has_rejection()) GTEST_SKIP() << result.rejection().message();
  EXPECT_THAT(result.output(), HasSubstr("codexd: refused to run /usr/bin/touch: forbidden by"));
  EXPECT_THAT(result.output(), HasSubstr("rc=126"));
  EXPECT_FALSE(exists(daemon_.workspace() + "/forbidden-marker"));
}

// The keeper relays the execs and still performs chmod: under Landlock too, chmod +x in the
// workspace works under supervision (it was refused everywhere while the daemon held the
// listener), and a nested exec is still seen.
TEST_F(ExecSupervisionLandlock, ChmodInTheWorkspaceWorksThere) {
  ASSERT_TRUE(daemon_.started());
  v1::ExecResult result = agent_.exec_ok(exec_script(
      daemon_.workspace(),
      // In the agent's private /tmp: Landlock keeps the workspace's own top level from gaining
      // entries while its .codex is missing (docs/sandbox.md).
      "cd \"$TMPDIR\" && printf '#!/bin/sh\\necho built\\n' > build.sh; chmod +x build.sh && ./build.sh"));
  if (result.has_rejection()) GTEST_SKIP() << result.rejection().message();
  EXPECT_THAT(result.output(), HasSubstr("built"));
  EXPECT_EQ(result.exit_code(), 0) << result.output();
}

class ExecSupervisionAudit : public DaemonTest {
 protected:
  ExecSupervisionAudit() : DaemonTest(supervised("audit")) {}
  Client agent_{daemon_, "agent-a"};
};

TEST_F(ExecSupervisionAudit, AuditModeRefusesNothingAndRecordsWhatEnforceWouldHaveDone) {
  ASSERT_TRUE(daemon_.started());
  write_makefile(daemon_.workspace(), "touch forbidden-marker && echo made");
  v1::ExecResult result = agent_.exec_ok(exec_request(daemon_.workspace(), {"make", "target"}));
  if (result.has_rejection()) GTEST_SKIP() << result.rejection().message();
  EXPECT_THAT(result.output(), HasSubstr("made"));
  EXPECT_TRUE(exists(daemon_.workspace() + "/forbidden-marker"));
  bool recorded = false;
  wait_for_dir_change(daemon_.dir(), [&] {
    for (const auto& j : exec_lines(daemon_.audit_log_path())) {
      recorded = recorded || (j["outcome"] == "would_refuse" && j["mode"] == "audit" && j["decision"] == "forbidden");
    }
    return recorded;
  }, kGuard);
  EXPECT_TRUE(recorded) << slurp(daemon_.audit_log_path());
}

// Each exec waits until the daemon has read it (its pid and parent are read while it exists):
// a loop of quick programs is recorded whole, every one of them.
TEST_F(ExecSupervisionAudit, EveryExecOfAQuickLoopIsRecorded) {
  ASSERT_TRUE(daemon_.started());
  v1::ExecResult result = agent_.exec_ok(
      exec_script(daemon_.workspace(), "i=0; while [ $i -lt 100 ]; do /bin/true; i=$((i+1)); done; echo looped"));
  if (result.has_rejection()) GTEST_SKIP() << result.rejection().message();
  ASSERT_THAT(result.output(), HasSubstr("looped"));
  size_t trues = 0;
  wait_for_dir_change(daemon_.dir(), [&] {
    trues = 0;
    for (const auto& j : exec_lines(daemon_.audit_log_path())) {
      const std::string path = j["path"];
      if (path == "/bin/true" && j["outcome"] == "ran") ++trues;
    }
    return trues >= 100;
  }, kGuard);
  EXPECT_EQ(trues, 100u);
}

// Audit never holds an exec for long: with the daemon stopped (SIGSTOP, as if it hung or was
// being restarted), each exec goes on after the keeper's bounded wait (500 ms) instead of
// waiting for it, as enforce would.
TEST_F(ExecSupervisionAudit, AStoppedDaemonHoldsAnAuditedExecOnlyBriefly) {
  ASSERT_TRUE(daemon_.started());
  v1::ExecCommandRequest request = exec_script(daemon_.workspace(), "read go < go.fifo; /bin/true; /bin/true; touch went-on");
  request.set_yield_time_ms(250);
  Fifo go(daemon_.workspace(), "go.fifo");
  v1::ExecResult started = agent_.exec_ok(request);
  if (started.has_rejection()) GTEST_SKIP() << started.rejection().message();
  ASSERT_TRUE(started.has_session_id()) << started.output();
  ASSERT_EQ(::kill(daemon_.pid(), SIGSTOP), 0);
  go.write("go\n");
  const std::string marker = daemon_.workspace() + "/went-on";
  const bool went_on = wait_for_dir_change(daemon_.workspace(), [&] { return exists(marker); }, std::chrono::seconds(20));
  ::kill(daemon_.pid(), SIGCONT);
  EXPECT_TRUE(went_on) << "the command's execs waited for a stopped daemon";
}

class ExecSupervisionNever : public DaemonTest {
 protected:
  ExecSupervisionNever() : DaemonTest(supervised("enforce", "never")) {}
  Client agent_{daemon_, "agent-a"};
};

TEST_F(ExecSupervisionNever, APromptRuleUnderAPolicyThatNeverAsksRefusesTheNestedExec) {
  ASSERT_TRUE(daemon_.started());
  write_makefile(daemon_.workspace(), "touch asked-marker; echo rc=$$?");
  v1::ExecResult result = agent_.exec_ok(exec_request(daemon_.workspace(), {"make", "target"}));
  if (result.has_rejection()) GTEST_SKIP() << result.rejection().message();
  EXPECT_THAT(result.output(), HasSubstr("approval_policy never does not ask reviewers"));
  EXPECT_THAT(result.output(), HasSubstr("rc=126"));
  EXPECT_FALSE(exists(daemon_.workspace() + "/asked-marker"));
}

}  // namespace
}  // namespace codexd::testing::approvals
