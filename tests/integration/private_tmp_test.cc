// The private per-agent /tmp (docs/sandbox.md "Private /tmp"), on a real daemon with real
// sandboxed commands, for both Linux backends: what an agent's command writes to its /tmp its
// next command sees, another agent's does not, and it never lands in the host's /tmp; the host
// /tmp is only reachable as an explicit writable root; a symlink or a foreign owner at the
// directory (or its parent) is refused, never followed; the directory goes once the agent's
// commands are all gone and the grace has passed (watched with inotify, no fixed sleep).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "codexd/v1/admin.grpc.pb.h"
#include "codexd/v1/exec.grpc.pb.h"
#include "tests/integration/exec_client.h"
#include "tests/support/fs_wait.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_daemon.h"

namespace codexd::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;

std::string unique_name(const std::string& prefix) {
  std::random_device rd;
  return prefix + std::to_string(::getpid()) + "-" + std::to_string(rd());
}

struct Backend {
  std::string config;    // [sandbox] lines
  std::string expected;  // GetStatus chosen_backend
  v1::SandboxBackend proto;
};

void PrintTo(const Backend& backend, std::ostream* out) { *out << backend.expected; }

Backend bwrap() { return {"backend = \"bwrap\"", "linux-bwrap", v1::SANDBOX_LINUX_BWRAP}; }
Backend landlock() { return {"backend = \"landlock\"", "linux-landlock", v1::SANDBOX_LINUX_LANDLOCK}; }

class PrivateTmpTest : public ::testing::TestWithParam<Backend> {
 protected:
  void start(const std::string& more_config = "") {
    TestDaemonOptions o;
    o.approval_policy = "never";  // run everything sandboxed, never ask
    o.sandbox_config = GetParam().config + "\n" + more_config;
    daemon_ = std::make_unique<TestDaemon>(o);
    ASSERT_TRUE(daemon_->started()) << daemon_->daemon_log();
    exec_ = v1::Exec::NewStub(daemon_->channel());
    admin_ = v1::Admin::NewStub(daemon_->channel());
    const std::string chosen = status().sandbox().chosen_backend();
    if (chosen != GetParam().expected) {
      skip_ = "backend " + GetParam().expected + " is not usable here (the daemon chose " + chosen + ")";
    }
  }
  void TearDown() override {
    exec_.reset();
    admin_.reset();
    if (daemon_) {
      EXPECT_EQ(daemon_->stop(), 0) << daemon_->daemon_log();
    }
  }

  v1::RunCommandResponse run(const std::string& agent, const std::string& script, bool dry_run = false) {
    v1::RunCommandRequest request;
    request.add_argv("/bin/sh");
    request.add_argv("-c");
    request.add_argv(script);
    request.set_workdir(daemon_->workspace());
    request.set_dry_run(dry_run);
    v1::RunCommandResponse response;
    grpc::ClientContext context;
    TestDaemon::label(context, agent);
    grpc::Status st = exec_->RunCommand(&context, request, &response);
    EXPECT_TRUE(st.ok()) << describe(st);
    return response;
  }
  // Runs `script` and expects it to succeed in the sandbox under test; returns its stdout.
  std::string run_ok(const std::string& agent, const std::string& script) {
    v1::RunCommandResponse r = run(agent, script);
    EXPECT_FALSE(r.has_rejection()) << r.rejection().message();
    EXPECT_EQ(r.sandbox(), GetParam().proto);
    EXPECT_EQ(r.exit_code(), 0) << script << "\n" << r.aggregated_output();
    return r.stdout();
  }

  v1::GetStatusResponse status() {
    v1::GetStatusResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(admin_->GetStatus(&context, v1::GetStatusRequest(), &response).ok());
    return response;
  }
  // The host path of `agent`'s private /tmp as GetStatus lists it ("" if not listed).
  std::string dir_of(const std::string& agent) {
    const v1::GetStatusResponse now = status();
    for (const auto& d : now.private_tmp().dirs()) {
      if (d.agent_id() == agent) return d.path();
    }
    return "";
  }

  std::unique_ptr<TestDaemon> daemon_;
  std::unique_ptr<v1::Exec::Stub> exec_;
  std::unique_ptr<v1::Admin::Stub> admin_;
  std::string skip_;
};

#define SKIP_IF_BACKEND_MISSING() \
  if (!skip_.empty()) GTEST_SKIP() << skip_

TEST_P(PrivateTmpTest, AnAgentsTmpIsItsOwnAndPersistsAcrossItsCommands) {
  ASSERT_NO_FATAL_FAILURE(start());
  SKIP_IF_BACKEND_MISSING();
  const std::string name = unique_name("codexd-pt-");
  // $TMPDIR is the private /tmp in both backends: "/tmp" under bwrap, the host path under
  // Landlock (which cannot remount /tmp).
  run_ok("agent-a", "echo from-a > \"$TMPDIR/" + name + "\"");
  EXPECT_EQ(run_ok("agent-a", "cat \"$TMPDIR/" + name + "\""), "from-a\n") << "the next command of the same agent";

  v1::RunCommandResponse b = run("agent-b", "cat \"$TMPDIR/" + name + "\"");
  EXPECT_NE(b.exit_code(), 0) << "another agent saw it: " << b.aggregated_output();
  EXPECT_FALSE(fs::exists("/tmp/" + name)) << "it landed in the host /tmp";

  // On the host: at the documented place, listed by GetStatus, the agent's alone.
  const std::string dir = dir_of("agent-a");
  ASSERT_FALSE(dir.empty());
  EXPECT_EQ(fs::path(dir).parent_path().string(), daemon_->private_tmp_base() + "/" + std::to_string(::geteuid()));
  EXPECT_NE(dir, dir_of("agent-b"));
  std::ifstream in(dir + "/" + name);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "from-a");
  struct stat st {};
  ASSERT_EQ(::lstat(dir.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);

  if (GetParam().proto == v1::SANDBOX_LINUX_BWRAP) {
    EXPECT_EQ(run_ok("agent-a", "cat /tmp/" + name + "; echo $TMPDIR"), "from-a\n/tmp\n") << "bwrap mounts it at /tmp";
  } else {
    EXPECT_EQ(run_ok("agent-a", "echo $TMPDIR"), dir + "\n");
  }

  // The dry run shows it (the same plan `codexctl exec --dry-run` prints).
  v1::RunCommandResponse plan = run("agent-a", "true", /*dry_run=*/true);
  EXPECT_THAT(std::vector<std::string>(plan.plan().sandbox_rules().begin(), plan.plan().sandbox_rules().end()),
              Contains(HasSubstr(dir)));
  EXPECT_THAT(plan.plan().env(), Contains(GetParam().proto == v1::SANDBOX_LINUX_BWRAP ? "TMPDIR=/tmp" : "TMPDIR=" + dir));
}

TEST_P(PrivateTmpTest, HostTmpIsNotWritableUnlessItIsAnExplicitWritableRoot) {
  TempDir host_dir(unique_name("codexd-pt-host-"), TempLocation::kTmp, 0777);
  const std::string host_file = host_dir.path() + "/seen";
  std::ofstream(host_file) << "host\n";
  {
    ASSERT_NO_FATAL_FAILURE(start());
    SKIP_IF_BACKEND_MISSING();
    v1::RunCommandResponse r = run("agent-a", "echo planted > " + host_dir.path() + "/planted");
    EXPECT_NE(r.exit_code(), 0) << r.aggregated_output();
    EXPECT_FALSE(fs::exists(host_dir.path() + "/planted")) << "a command wrote into the host /tmp";
    if (GetParam().proto == v1::SANDBOX_LINUX_BWRAP) {
      v1::RunCommandResponse seen = run("agent-a", "cat " + host_file);
      EXPECT_NE(seen.exit_code(), 0) << "the host /tmp is visible under bwrap: " << seen.aggregated_output();
    }
    exec_.reset();
    admin_.reset();
    EXPECT_EQ(daemon_->stop(), 0);
  }
  ASSERT_NO_FATAL_FAILURE(start("writable_roots = [\"/tmp\"]"));
  run_ok("agent-a", "echo planted > " + host_dir.path() + "/planted; cat " + host_file);
  EXPECT_TRUE(fs::exists(host_dir.path() + "/planted")) << "an explicit writable root /tmp is the host's";
  v1::RunCommandResponse plan = run("agent-a", "true", /*dry_run=*/true);
  EXPECT_THAT(std::vector<std::string>(plan.plan().sandbox_rules().begin(), plan.plan().sandbox_rules().end()),
              ::testing::Not(Contains(HasSubstr("private /tmp: "))));
}

TEST_P(PrivateTmpTest, ASymlinkOrAForeignOwnerAtTheDirectoryIsRefusedNotFollowed) {
  ASSERT_NO_FATAL_FAILURE(start());
  SKIP_IF_BACKEND_MISSING();
  run_ok("agent-s", "true");
  const std::string dir = dir_of("agent-s");
  ASSERT_FALSE(dir.empty());
  TempDir target("codexd-pt-target", TempLocation::kOutsideTmp, 0755);
  auto refused = [&](const std::string& what) {
    v1::RunCommandResponse r = run("agent-s", "echo x > \"$TMPDIR/escaped\"");
    EXPECT_TRUE(r.has_rejection()) << what << ": the command ran: " << r.aggregated_output();
    EXPECT_THAT(r.rejection().message(), HasSubstr("private /tmp")) << what;
    EXPECT_TRUE(fs::is_empty(target.path())) << what << ": the link was followed";
    struct stat st {};
    EXPECT_EQ(::stat(target.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0755u) << what << ": the link's target was changed";
    return r.rejection().message();
  };

  // The directory itself replaced by a symlink.
  fs::remove_all(dir);
  fs::create_directory_symlink(target.path(), dir);
  EXPECT_THAT(refused("symlinked directory"), HasSubstr("symlink"));
  fs::remove(dir);

  // Its parent (<base>/<uid>) a symlink to a tree that looks right.
  const std::string uid_dir = fs::path(dir).parent_path().string();
  const std::string moved = uid_dir + ".moved";
  fs::create_directory(dir);
  ::chmod(dir.c_str(), 0700);
  fs::rename(uid_dir, moved);
  fs::create_directory_symlink(moved, uid_dir);
  EXPECT_THAT(refused("symlinked parent"), HasSubstr("symlink"));
  fs::remove(uid_dir);
  fs::rename(moved, uid_dir);

  // A directory that belongs to someone else, or that others may write.
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
  EXPECT_THAT(refused("foreign owner"), HasSubstr("belongs to uid 65534"));
  ASSERT_EQ(::chown(dir.c_str(), ::geteuid(), ::getegid()), 0);
  ::chmod(dir.c_str(), 0777);
  EXPECT_THAT(refused("world-writable"), HasSubstr("mode 0777"));
  ::chmod(dir.c_str(), 0700);
  run_ok("agent-s", "true");  // put right, it is used again
}

TEST_P(PrivateTmpTest, RemovedAfterTheGraceOnceTheAgentsCommandsAreGone) {
  ASSERT_NO_FATAL_FAILURE(start("private_tmp_grace_ms = 300"));
  SKIP_IF_BACKEND_MISSING();
  // A long-running session of agent-l holds its directory...
  v1::ExecCommandRequest sleeper;
  sleeper.add_argv("/bin/sh");
  sleeper.add_argv("-c");
  sleeper.add_argv("echo held > \"$TMPDIR/held\"; exec sleep 600");
  sleeper.set_workdir(daemon_->workspace());
  sleeper.set_yield_time_ms(250);
  v1::ExecResult started;
  {
    grpc::ClientContext context;
    TestDaemon::label(context, "agent-l");
    ASSERT_TRUE(exec_->ExecCommand(&context, sleeper, &started).ok());
  }
  ASSERT_TRUE(started.has_session_id()) << started.output();
  const std::string held = dir_of("agent-l");
  ASSERT_FALSE(held.empty());

  // ...while agent-s's one-shot ends, and its directory goes after the grace.
  run_ok("agent-s", "echo x > \"$TMPDIR/x\"");
  const std::string idle = dir_of("agent-s");
  ASSERT_FALSE(idle.empty());
  ASSERT_TRUE(wait_until_gone(idle)) << idle << " was not removed";
  EXPECT_TRUE(fs::exists(held + "/held")) << "a directory in use was removed";
  const v1::GetStatusResponse busy = status();
  for (const auto& d : busy.private_tmp().dirs()) {
    if (d.agent_id() == "agent-l") {
      EXPECT_EQ(d.commands(), 1u);
    }
  }

  // Once the session is gone, so is its directory; the renamed tree is removed too.
  EXPECT_TRUE(cancel(*exec_, started.session_id(), v1::CancelRequest::KILL).ok());
  ASSERT_TRUE(wait_until_gone(held)) << held << " stayed after its session ended";
  EXPECT_TRUE(wait_until_empty(fs::path(held).parent_path().string()));
  EXPECT_EQ(status().private_tmp().dirs_size(), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, PrivateTmpTest, ::testing::Values(bwrap(), landlock()),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return info.param.proto == v1::SANDBOX_LINUX_BWRAP ? std::string("Bwrap")
                                                                              : std::string("Landlock");
                         });

}  // namespace
}  // namespace codexd::testing
