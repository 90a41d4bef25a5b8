// ApprovalStore: the approvals.json format, a file per approval, the atomic write, loading
// (missing, corrupt, symlinked files), and the broker and session cache restoring what was saved.
#include "daemon/orchestrator/approval_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "daemon/orchestrator/approval_broker.h"
#include "daemon/orchestrator/approval_cache.h"
#include "tests/support/temp_dir.h"

namespace codexd::orchestrator {
namespace {

using testing::read_text_file;

using ::testing::HasSubstr;
using Clock = std::chrono::system_clock;

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Clock::time_point at_ms(int64_t ms) { return Clock::time_point(std::chrono::milliseconds(ms)); }

ApprovalTicket full_ticket() {
  ApprovalTicket t;
  t.id = "apr_00000000000000aa";
  t.requester_uid = 1000;
  t.agent_id = "agent-a";
  t.argv = {"mkdir", "-p", "dir with space", "\xc3\xa9"};
  t.cmd = "mkdir -p 'dir with space'";
  t.workdir = "/w";
  t.reason = {ApprovalReason::Kind::kPromptRule, "needs approval", "creates directories"};
  policy::RuleMatch m;
  m.matched_prefix = {"mkdir"};
  m.decision = policy::Decision::kPrompt;
  m.resolved_program = "/usr/bin/mkdir";
  m.justification = "creates directories";
  m.source = "test.rules:1:1";
  t.matched_rules = {m};
  t.sandbox = {"linux-bwrap", "workspace-write", {"/w", "/tmp"}, sandbox::NetworkMode::kProxy, {"/secret"}, {"/w/.git"}};
  t.created_at = at_ms(1700000000123);
  t.expires_at = at_ms(1700000060123);
  t.turn_id = "turn-1";
  t.call_id = "call-1";
  t.tty = true;
  t.proposed_amendment = {"mkdir", "-p"};
  t.attempt = 2;
  return t;
}

TEST(ApprovalStateFormat, RoundTripsEveryField) {
  StoredState state;
  state.approvals.push_back({full_ticket(), std::nullopt, std::nullopt});
  ApprovalOutcome outcome;
  outcome.kind = ApprovalOutcome::Kind::kDecided;
  outcome.decision = ReviewDecision::kApprovedForSession;
  outcome.resolved_by = 0;
  outcome.rationale = "fine";
  ApprovalTicket second = full_ticket();
  second.id = "apr_00000000000000bb";
  second.expires_at.reset();
  state.approvals.push_back({second, outcome, at_ms(1700000001000)});
  state.grants.push_back({1000, "agent-a", {"{\"command\":[\"ls\"]}", "k2"}});

  const std::string text = serialize_approval_state(state);
  EXPECT_THAT(text, HasSubstr("\"version\": 1"));
  auto parsed = parse_approval_state(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_EQ(parsed->approvals.size(), 2u);
  const ApprovalTicket& t = parsed->approvals[0].ticket;
  const ApprovalTicket want = full_ticket();
  EXPECT_EQ(t.id, want.id);
  EXPECT_EQ(t.requester_uid, want.requester_uid);
  EXPECT_EQ(t.agent_id, want.agent_id);
  EXPECT_EQ(t.argv, want.argv);
  EXPECT_EQ(t.cmd, want.cmd);
  EXPECT_EQ(t.workdir, want.workdir);
  EXPECT_EQ(t.reason.kind, want.reason.kind);
  EXPECT_EQ(t.reason.message, want.reason.message);
  EXPECT_EQ(t.reason.justification, want.reason.justification);
  ASSERT_EQ(t.matched_rules.size(), 1u);
  EXPECT_EQ(t.matched_rules[0].matched_prefix, want.matched_rules[0].matched_prefix);
  EXPECT_EQ(t.matched_rules[0].decision, policy::Decision::kPrompt);
  EXPECT_EQ(t.matched_rules[0].resolved_program, want.matched_rules[0].resolved_program);
  EXPECT_EQ(t.matched_rules[0].justification, want.matched_rules[0].justification);
  EXPECT_EQ(t.matched_rules[0].source, want.matched_rules[0].source);
  EXPECT_EQ(t.sandbox.backend, "linux-bwrap");
  EXPECT_EQ(t.sandbox.writable_roots, want.sandbox.writable_roots);
  EXPECT_EQ(t.sandbox.network, sandbox::NetworkMode::kProxy);
  EXPECT_EQ(t.sandbox.denied_read, want.sandbox.denied_read);
  EXPECT_EQ(t.sandbox.protected_paths, want.sandbox.protected_paths);
  EXPECT_EQ(t.created_at, want.created_at);
  EXPECT_EQ(t.expires_at, want.expires_at);
  EXPECT_EQ(t.turn_id, want.turn_id);
  EXPECT_EQ(t.call_id, want.call_id);
  EXPECT_TRUE(t.tty);
  EXPECT_EQ(t.proposed_amendment, want.proposed_amendment);
  EXPECT_EQ(t.attempt, 2u);
  EXPECT_FALSE(parsed->approvals[0].outcome.has_value());
  const StoredApproval& r = parsed->approvals[1];
  EXPECT_FALSE(r.ticket.expires_at.has_value());
  ASSERT_TRUE(r.outcome.has_value());
  EXPECT_EQ(r.outcome->kind, ApprovalOutcome::Kind::kDecided);
  EXPECT_EQ(r.outcome->decision, ReviewDecision::kApprovedForSession);
  EXPECT_EQ(r.outcome->resolved_by, std::optional<uid_t>(0));
  EXPECT_EQ(r.outcome->rationale, "fine");
  EXPECT_EQ(r.resolved_at, std::optional<Clock::time_point>(at_ms(1700000001000)));
  ASSERT_EQ(parsed->grants.size(), 1u);
  EXPECT_EQ(parsed->grants[0].uid, 1000u);
  EXPECT_EQ(parsed->grants[0].agent_id, "agent-a");
  EXPECT_EQ(parsed->grants[0].keys, state.grants[0].keys);
}

// A heuristic approval's match and amendment are its whole command: read back, they share the
// ticket's argv again (one copy per restored approval, as per pending one; issue 19 item 5).
TEST(ApprovalStateFormat, AWholeCommandMatchAndAmendmentShareTheArgvWhenReadBack) {
  ApprovalTicket heuristic = full_ticket();
  heuristic.matched_rules[0].matched_prefix = heuristic.argv;
  heuristic.matched_rules[0].heuristic = true;
  heuristic.proposed_amendment = heuristic.argv;
  StoredState state;
  state.approvals.push_back({heuristic, std::nullopt, std::nullopt});
  auto parsed = parse_approval_state(serialize_approval_state(state));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const ApprovalTicket& t = parsed->approvals[0].ticket;
  EXPECT_EQ(t.argv, heuristic.argv);
  EXPECT_TRUE(t.matched_rules[0].matched_prefix.shares(t.argv));
  EXPECT_TRUE(t.proposed_amendment.shares(t.argv));
  // A shorter prefix is its own.
  ApprovalTicket rule = full_ticket();
  state.approvals = {{rule, std::nullopt, std::nullopt}};
  parsed = parse_approval_state(serialize_approval_state(state));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->approvals[0].ticket.proposed_amendment, (std::vector<std::string>{"mkdir", "-p"}));
  EXPECT_FALSE(parsed->approvals[0].ticket.proposed_amendment.shares(parsed->approvals[0].ticket.argv));
}

TEST(ApprovalStateFormat, RejectsMalformedFilesWithAReason) {
  const std::string good = serialize_approval_state({{{full_ticket(), std::nullopt, std::nullopt}}, {}});
  struct Case {
    std::string text;
    std::string reason;
  } cases[] = {
      {"", "not valid JSON"},
      {good.substr(0, good.size() / 2), "not valid JSON"},
      {"[1,2]", "not a JSON object"},
      {"{\"approvals\": [], \"grants\": []}", "no \"version\""},
      {"{\"version\": 2, \"approvals\": [], \"grants\": []}", "unknown version 2"},
      {"{\"version\": \"1\", \"approvals\": [], \"grants\": []}", "unknown version of type string"},
      {"{\"version\": 1, \"grants\": []}", "\"approvals\""},
      {"{\"version\": 1, \"approvals\": [{\"id\": \"apr_1\"}], \"grants\": []}", "missing field"},
      {"{\"version\": 1, \"approvals\": [], \"grants\": [{\"uid\": \"x\", \"agent_id\": \"a\", \"keys\": []}]}",
       "wrong type"},
  };
  for (const auto& c : cases) {
    auto parsed = parse_approval_state(c.text);
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_THAT(parsed.status().message(), HasSubstr(c.reason)) << c.text;
  }
  std::string bad_reason = good;
  bad_reason.replace(bad_reason.find("prompt_rule"), 11, "made_up");
  auto parsed = parse_approval_state(bad_reason);
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(), HasSubstr("unknown reason kind"));
}

TEST(ApprovalStateWrite, IsAtomicPrivateAndNeverFollowsALink) {
  testing::TempDir dir("codexd-store");
  const std::string path = dir.sub("approvals.json");
  ASSERT_TRUE(write_file_atomically(path, "one\n").ok());
  EXPECT_EQ(read_text_file(path), "one\n");
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_TRUE(write_file_atomically(path, "two\n").ok());
  EXPECT_EQ(read_text_file(path), "two\n");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"approvals.json"}) << "no temp file is left";

  // A symlink at the path is replaced, its target untouched.
  const std::string target = dir.make_file("target", "keep\n");
  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
  ASSERT_TRUE(write_file_atomically(path, "three\n").ok());
  EXPECT_EQ(read_text_file(target), "keep\n");
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(read_text_file(path), "three\n");
}

TEST(ApprovalStoreLoad, CreatesTheDirectoryAndSavesChanges) {
  testing::TempDir dir("codexd-store");
  const std::string state = dir.sub("a/b/state");
  ApprovalStore store(state);
  auto loaded = store.load();
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_TRUE(loaded->state.approvals.empty());
  EXPECT_TRUE(loaded->corrupt_reason.empty());
  struct stat st {};
  // Traversable (the private /tmp base lives in the state directory too; umask aside, 0755),
  // never writable by others; the file itself is 0600.
  ASSERT_EQ(::stat(state.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0022, 0u);
  EXPECT_EQ(st.st_mode & 0700, 0700u);
  store.set_grants({{1000, "agent-a", {"k"}}});
  store.set_approvals({{full_ticket(), std::nullopt, std::nullopt}});
  EXPECT_EQ(store.last_error(), "");
  ApprovalStore again(state);
  auto reloaded = again.load();
  ASSERT_TRUE(reloaded.ok());
  ASSERT_EQ(reloaded->state.approvals.size(), 1u);
  ASSERT_EQ(reloaded->state.grants.size(), 1u);
  // Frozen (daemon shutdown): changes are no longer written.
  again.freeze();
  again.set_approvals({});
  ApprovalStore third(state);
  EXPECT_EQ(third.load()->state.approvals.size(), 1u);
}

TEST(ApprovalStoreLoad, ACorruptFileOrASymlinkIsMovedAside) {
  testing::TempDir dir("codexd-store");
  const std::string garbage = "{\"version\": 1, \"approv";
  dir.make_file("approvals.json", garbage);
  ApprovalStore store(dir.path());
  auto loaded = store.load();
  ASSERT_TRUE(loaded.ok());
  EXPECT_THAT(loaded->corrupt_reason, HasSubstr("not valid JSON"));
  EXPECT_TRUE(loaded->state.approvals.empty());
  EXPECT_THAT(loaded->moved_to, ::testing::StartsWith(dir.sub("approvals.json.corrupt-")));
  EXPECT_EQ(read_text_file(loaded->moved_to), garbage);
  struct stat st {};
  EXPECT_NE(::lstat(dir.sub("approvals.json").c_str(), &st), 0);
  ASSERT_EQ(::unlink(loaded->moved_to.c_str()), 0);

  const std::string target = dir.make_file("elsewhere.json", serialize_approval_state({}));
  ASSERT_EQ(::symlink(target.c_str(), dir.sub("approvals.json").c_str()), 0);
  ApprovalStore linked(dir.path());
  auto refused = linked.load();
  ASSERT_TRUE(refused.ok());
  EXPECT_THAT(refused->corrupt_reason, HasSubstr("symbolic link"));
  EXPECT_EQ(read_text_file(target), serialize_approval_state({}));
}

ino_t inode(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

StoredApproval pending_with_id(const std::string& id) {
  StoredApproval a{full_ticket(), std::nullopt, std::nullopt};
  a.ticket.id = id;
  return a;
}

// Each approval is a file of its own, and a change writes only what changed: a burst of large
// requests once rewrote every pending one at each change (the pending-limits test, 18 requests
// of 1 MB, took 20.6 s; 3.7 s now).
TEST(ApprovalStoreFiles, EachApprovalIsAFileAndOnlyWhatChangedIsWritten) {
  testing::TempDir dir("codexd-store");
  ApprovalStore store(dir.path());
  ASSERT_TRUE(store.load().ok());
  const std::string a = dir.sub("approvals.d/apr_000000000000000a.json");
  const std::string b = dir.sub("approvals.d/apr_000000000000000b.json");
  store.set_approvals({pending_with_id("apr_000000000000000a"), pending_with_id("apr_000000000000000b")});
  ASSERT_EQ(store.last_error(), "");
  EXPECT_EQ(names_in(dir.sub("approvals.d")),
            (std::vector<std::string>{"apr_000000000000000a.json", "apr_000000000000000b.json"}));
  struct stat st {};
  ASSERT_EQ(::stat(dir.sub("approvals.d").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat(a.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  const ino_t a_before = inode(a), b_before = inode(b);

  // b is answered while its requester is away: only b's file is written again.
  StoredApproval b_resolved = pending_with_id("apr_000000000000000b");
  b_resolved.outcome = ApprovalOutcome{};
  b_resolved.resolved_at = at_ms(1700000001000);
  store.set_approvals({pending_with_id("apr_000000000000000a"), b_resolved});
  EXPECT_EQ(inode(a), a_before) << "an unchanged approval was written again";
  EXPECT_NE(inode(b), b_before);
  // a is gone (claimed, expired): its file is removed, b's is not touched.
  const ino_t b_now = inode(b);
  store.set_approvals({b_resolved});
  EXPECT_EQ(inode(a), 0u);
  EXPECT_EQ(inode(b), b_now);
  EXPECT_THAT(read_text_file(dir.sub("approvals.json")), ::testing::Not(HasSubstr("apr_")));

  ApprovalStore again(dir.path());
  auto loaded = again.load();
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->state.approvals.size(), 1u);
  EXPECT_EQ(loaded->state.approvals[0].ticket.id, "apr_000000000000000b");
  EXPECT_TRUE(loaded->state.approvals[0].outcome.has_value());
  EXPECT_EQ(loaded->state.approvals[0].ticket.argv, full_ticket().argv);
}

// approvals.json of a daemon from before approvals.d lists the approvals itself: they are
// restored, and move to files of their own at the first change (the grants stay).
TEST(ApprovalStoreFiles, AnEarlierDaemonsSingleFileIsReadAndItsApprovalsMoveToFiles) {
  testing::TempDir dir("codexd-store");
  StoredState old;
  old.approvals = {pending_with_id("apr_00000000000000c1")};
  old.grants = {{1000, "agent-a", {"k"}}};
  dir.make_file("approvals.json", serialize_approval_state(old));
  ApprovalStore store(dir.path());
  auto loaded = store.load();
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->state.approvals.size(), 1u);
  ASSERT_EQ(loaded->state.grants.size(), 1u);
  store.set_approvals(loaded->state.approvals);
  EXPECT_EQ(store.last_error(), "");
  EXPECT_EQ(names_in(dir.sub("approvals.d")), std::vector<std::string>{"apr_00000000000000c1.json"});
  auto main = parse_approval_state(read_text_file(dir.sub("approvals.json")));
  ASSERT_TRUE(main.ok());
  EXPECT_TRUE(main->approvals.empty());
  EXPECT_EQ(main->grants.size(), 1u);
}

TEST(ApprovalStoreFiles, AnUnusableApprovalFileIsSetAsideAndTheOthersLoad) {
  testing::TempDir dir("codexd-store");
  {
    ApprovalStore store(dir.path());
    ASSERT_TRUE(store.load().ok());
    store.set_approvals({pending_with_id("apr_00000000000000d1")});
  }
  dir.make_file("approvals.d/apr_00000000000000d2.json", "{\"id\": \"apr_000");
  dir.make_file("approvals.d/apr_00000000000000d3.json", serialize_stored_approval(pending_with_id("apr_00000000000000ff")));
  const std::string target = dir.make_file("elsewhere.json", serialize_stored_approval(pending_with_id("apr_00000000000000d4")));
  ASSERT_EQ(::symlink(target.c_str(), dir.sub("approvals.d/apr_00000000000000d4.json").c_str()), 0);
  dir.make_file("approvals.d/apr_00000000000000d1.json.tmp-42", "half a write");

  ApprovalStore store(dir.path());
  auto loaded = store.load();
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->state.approvals.size(), 1u);
  EXPECT_EQ(loaded->state.approvals[0].ticket.id, "apr_00000000000000d1");
  ASSERT_EQ(loaded->set_aside.size(), 3u);
  EXPECT_THAT(loaded->set_aside[0], HasSubstr("not valid JSON"));
  EXPECT_THAT(loaded->set_aside[1], HasSubstr("it holds approval apr_00000000000000ff"));
  EXPECT_THAT(loaded->set_aside[2], HasSubstr("symbolic link"));
  const auto names = names_in(dir.sub("approvals.d"));
  EXPECT_EQ(names.size(), 4u);  // d1, and the three moved aside; the temp file is gone
  for (const auto& n : names) {
    EXPECT_TRUE(n == "apr_00000000000000d1.json" || n.find(".json.corrupt-") != std::string::npos) << n;
  }
  EXPECT_EQ(read_text_file(target), serialize_stored_approval(pending_with_id("apr_00000000000000d4"))) << "the link's target is untouched";
}

// ---- the broker and the cache over a saved state ------------------------------------------

class AlwaysReview : public ReviewerPolicy {
 public:
  bool may_review(uid_t, const ApprovalTicket&) const override { return true; }
};

ApprovalTicket asked(const std::string& call_id = "call-1", const std::string& agent = "agent-a") {
  ApprovalTicket t;
  t.requester_uid = 1000;
  t.agent_id = agent;
  t.argv = {"mkdir", "x"};
  t.workdir = "/w";
  t.call_id = call_id;
  return t;
}

struct Outcomes {
  std::vector<ApprovalOutcome> got;
  ApprovalBroker::Done done() {
    return [this](const ApprovalOutcome& o) { got.push_back(o); };
  }
};

class RestoredBroker : public ::testing::Test {
 protected:
  std::unique_ptr<ApprovalBroker> make(ApprovalStore& store) {
    auto broker = std::make_unique<ApprovalBroker>(io, BrokerOptions{}, std::make_shared<AlwaysReview>());
    broker->set_store(&store);
    return broker;
  }
  testing::TempDir dir{"codexd-store"};
  boost::asio::io_context io;
};

TEST_F(RestoredBroker, APendingApprovalIsClaimedOnlyByTheSameRequest) {
  std::string id;
  {
    ApprovalStore store(dir.path());
    ASSERT_TRUE(store.load().ok());
    auto broker = make(store);
    id = broker->request(asked(), [](const ApprovalOutcome&) {});
    broker->shutdown();  // a stop: the pending approval stays saved
  }
  ApprovalStore store(dir.path());
  auto loaded = store.load();
  ASSERT_TRUE(loaded.ok());
  auto broker = make(store);
  auto restored = broker->restore(loaded->state.approvals);
  EXPECT_EQ(restored.pending, 1u);
  ASSERT_EQ(broker->pending_for(0).size(), 1u);
  EXPECT_EQ(broker->pending_for(0)[0].id, id);

  Outcomes other_call, other_agent, empty_call, mine;
  EXPECT_NE(broker->request(asked("call-2"), other_call.done()), id);
  EXPECT_NE(broker->request(asked("call-1", "agent-b"), other_agent.done()), id);
  EXPECT_NE(broker->request(asked(""), empty_call.done()), id) << "no call id, nothing to match";
  ApprovalTicket other_cwd = asked();
  other_cwd.workdir = "/elsewhere";
  EXPECT_NE(broker->request(other_cwd, [](const ApprovalOutcome&) {}), id);
  EXPECT_EQ(broker->request(asked(), mine.done()), id);
  EXPECT_EQ(broker->pending_count(), 5u);
  ASSERT_TRUE(broker->resolve(id, ReviewDecision::kApproved, 0, "").ok());
  ASSERT_EQ(mine.got.size(), 1u);
  EXPECT_EQ(mine.got[0].decision, ReviewDecision::kApproved);
  EXPECT_TRUE(other_call.got.empty());
  EXPECT_TRUE(other_agent.got.empty());
}

TEST_F(RestoredBroker, AnAnswerGivenWhileTheRequesterIsAwayIsHandedOverOnce) {
  ApprovalTicket t = asked();
  t.id = "apr_0000000000000001";
  t.created_at = Clock::now();
  ApprovalStore store(dir.path());
  ASSERT_TRUE(store.load().ok());
  auto broker = make(store);
  EXPECT_EQ(broker->restore({{t, std::nullopt, std::nullopt}}).pending, 1u);
  ASSERT_TRUE(broker->resolve(t.id, ReviewDecision::kDenied, 0, "no").ok());
  EXPECT_EQ(broker->pending_count(), 0u);
  EXPECT_EQ(broker->resolve(t.id, ReviewDecision::kApproved, 0, "").code(), StatusCode::kFailedPrecondition);

  // Saved as resolved: a restart in between keeps the answer.
  ApprovalStore reread(dir.path());
  auto loaded = reread.load();
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->state.approvals.size(), 1u);
  ASSERT_TRUE(loaded->state.approvals[0].outcome.has_value());
  auto broker2 = make(reread);
  EXPECT_EQ(broker2->restore(loaded->state.approvals).resolved, 1u);

  Outcomes o;
  EXPECT_EQ(broker2->request(asked(), o.done()), t.id);
  ASSERT_EQ(o.got.size(), 1u) << "answered at once";
  EXPECT_EQ(o.got[0].decision, ReviewDecision::kDenied);
  EXPECT_EQ(o.got[0].rationale, "no");
  Outcomes again;
  EXPECT_NE(broker2->request(asked(), again.done()), t.id) << "claimed once";
  EXPECT_TRUE(again.got.empty());
}

TEST_F(RestoredBroker, ExpiryCountsFromTheOriginalCreation) {
  ApprovalTicket expired = asked("call-old");
  expired.id = "apr_0000000000000002";
  expired.created_at = Clock::now() - std::chrono::minutes(10);
  expired.expires_at = Clock::now() - std::chrono::minutes(5);
  ApprovalTicket live = asked("call-live");
  live.id = "apr_0000000000000003";
  live.created_at = Clock::now();
  live.expires_at = Clock::now() + std::chrono::milliseconds(50);
  ApprovalTicket stale = asked("call-stale");  // resolved, unclaimed for longer than the claim window
  stale.id = "apr_0000000000000004";
  ApprovalOutcome denied;
  denied.decision = ReviewDecision::kDenied;
  ApprovalStore store(dir.path());
  ASSERT_TRUE(store.load().ok());
  auto broker = make(store);
  auto restored = broker->restore({{expired, std::nullopt, std::nullopt},
                                   {live, std::nullopt, std::nullopt},
                                   {stale, denied, Clock::now() - ApprovalBroker::kClaimWindow - std::chrono::seconds(1)}});
  EXPECT_EQ(restored.pending, 1u);
  EXPECT_EQ(restored.timed_out, 1u);
  Outcomes old;
  EXPECT_EQ(broker->request(asked("call-old"), old.done()), expired.id);
  ASSERT_EQ(old.got.size(), 1u);
  EXPECT_EQ(old.got[0].kind, ApprovalOutcome::Kind::kTimedOut);
  Outcomes waiting;
  EXPECT_EQ(broker->request(asked("call-live"), waiting.done()), live.id);
  // The live one times out on its remaining time (its timer is the event).
  io.run_for(std::chrono::seconds(10));
  ASSERT_EQ(waiting.got.size(), 1u);
  EXPECT_EQ(waiting.got[0].kind, ApprovalOutcome::Kind::kTimedOut);
  Outcomes late;
  EXPECT_NE(broker->request(asked("call-stale"), late.done()), stale.id) << "dropped after the claim window";
}

TEST(RestoredCache, GrantsComeBackInTheirScopes) {
  testing::TempDir dir("codexd-store");
  {
    ApprovalStore store(dir.path());
    ASSERT_TRUE(store.load().ok());
    ApprovalCache cache(2);
    cache.set_store(&store);
    cache.approve(1000, "agent-a", "k1");
    cache.approve(1000, "agent-a", "k2");
    cache.approve(1001, "agent-b", "k3");
  }
  ApprovalStore store(dir.path());
  auto loaded = store.load();
  ASSERT_TRUE(loaded.ok());
  ApprovalCache cache(2);
  cache.set_store(&store);
  EXPECT_EQ(cache.restore(loaded->state.grants), 3u);
  EXPECT_TRUE(cache.is_approved(1000, "agent-a", "k2"));
  EXPECT_TRUE(cache.is_approved(1000, "agent-a", "k1"));
  EXPECT_FALSE(cache.is_approved(1000, "agent-b", "k1"));
  EXPECT_FALSE(cache.is_approved(1001, "agent-a", "k1"));
  EXPECT_TRUE(cache.is_approved(1001, "agent-b", "k3"));
  // The LRU order came back too: k1 was just used, so a new key evicts k2.
  cache.approve(1000, "agent-a", "k4");
  EXPECT_FALSE(cache.is_approved(1000, "agent-a", "k2"));
  EXPECT_TRUE(cache.is_approved(1000, "agent-a", "k1"));
}

}  // namespace
}  // namespace codexd::orchestrator
