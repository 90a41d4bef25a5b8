#include "daemon/orchestrator/exec_supervisor.h"

#include <poll.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <spdlog/spdlog.h>

#include "base/shell_quote.h"

namespace codexd::orchestrator {
namespace {

namespace asio = boost::asio;

std::string describe_rule(const policy::RuleMatch& match) {
  std::string text = "prefix_rule(" + shell_join(match.matched_prefix) + ")";
  if (!match.source.empty()) text += " at " + match.source;
  return text;
}

void take_strictest(const policy::Evaluation& evaluation, NestedExecVerdict* verdict) {
  for (const policy::RuleMatch& match : evaluation.matched_rules) {
    if (verdict->matched_rule && match.decision <= verdict->decision) continue;
    verdict->matched_rule = true;
    verdict->decision = match.decision;
    verdict->rule = describe_rule(match);
    verdict->reason = match.justification.value_or("");
  }
}

std::string basename_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

NestedExecVerdict assess_nested_exec(const policy::Policy& policy, const std::string& path,
                                     const std::vector<std::string>& argv, const std::string& cwd) {
  NestedExecVerdict verdict;
  policy::MatchOptions options;
  options.resolve_host_executables = true;
  options.cwd = cwd;
  std::vector<std::string> by_path = argv;
  if (by_path.empty()) by_path.push_back(path);
  by_path[0] = path;
  take_strictest(policy.check(by_path, options), &verdict);
  if (!argv.empty() && basename_of(argv[0]) != basename_of(path)) take_strictest(policy.check(argv, options), &verdict);
  return verdict;
}

// One supervised sandbox: its exec relay (the keeper's other end), watched on the core thread.
class ExecSupervisor::Watch : public std::enable_shared_from_this<Watch> {
 public:
  Watch(std::shared_ptr<ExecSupervisor> supervisor, UniqueFd relay, exec::ChannelOwner owner,
        config::ExecSupervision mode)
      : supervisor_(std::move(supervisor)),
        relay_(*supervisor_->deps_.core, relay.release()),
        owner_(std::move(owner)),
        mode_(mode),
        seen_command_(owner_.adopted) {}

  void start() {
    supervisor_->open_trace(owner_, mode_);
    arm();
  }

  // The sandbox's process has exited (or the daemon stops): no more answers; approvals still
  // open for it are withdrawn.
  void stop() {
    boost::system::error_code ignored;
    relay_.close(ignored);
    supervisor_->close_trace(owner_.session_id);
    for (const std::string& id : asked_) supervisor_->deps_.broker->abandon(id);
    asked_.clear();
  }

 private:
  void arm() {
    relay_.async_wait(asio::posix::stream_descriptor::wait_read,
                         [weak = weak_from_this()](const boost::system::error_code& ec) {
                           auto self = weak.lock();
                           if (!ec && self) self->on_readable();
                         });
  }

  // Asio waits edge-triggered: every exec waiting now is taken before waiting again (two that
  // arrive together make one edge). At most kBatch per turn, so other work on the core thread
  // is not held up by a sandbox that execs without pause.
  void on_readable() {
    constexpr int kBatch = 64;
    for (int taken = 0; taken < kBatch; ++taken) {
      if (!relay_.is_open()) return;
      // Nothing waiting: wait for the next edge. Hung up without a message: the keeper is gone.
      pollfd p{relay_.native_handle(), POLLIN, 0};
      if (::poll(&p, 1, 0) != 1 || (p.revents & POLLIN) == 0) {
        if ((p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) return;  // the sandbox is gone
        arm();
        return;
      }
      Result<sandbox::ExecAttempt> attempt = sandbox::receive_exec_attempt(relay_.native_handle());
      if (!attempt.ok()) {
        const StatusCode code = attempt.status().code();
        if (code == StatusCode::kFailedPrecondition) return;  // the sandbox is gone
        if (code == StatusCode::kInvalidArgument) {
          spdlog::warn("exec supervision of session {} (agent {}): {}; skipped", owner_.session_id, owner_.agent_id,
                       attempt.status().message());
        } else if (code != StatusCode::kNotFound && code != StatusCode::kUnavailable) {
          spdlog::warn("exec supervision of session {} (agent {}): {}; its execs now wait", owner_.session_id,
                       owner_.agent_id, attempt.status().message());
          return;
        }
        continue;
      }
      decide(std::move(attempt).value());
    }
    asio::post(relay_.get_executor(), [weak = weak_from_this()] {
      if (auto self = weak.lock()) self->on_readable();
    });
  }

  void decide(sandbox::ExecAttempt attempt) {
    ExecAuditRecord record = base_record(attempt);
    if (!seen_command_) {
      // The sandbox's first exec is its command (the helper looks the program up itself and
      // execs once), admitted before it was started.
      seen_command_ = true;
      record.command = true;
      finish(attempt, true, std::move(record), "ran");
      return;
    }
    ++supervisor_->counts_.execs;
    if (!attempt.readable || attempt.path.empty()) {
      record.decision = "forbidden";
      if (mode_ == config::ExecSupervision::kAudit) {
        finish(attempt, true, std::move(record), "would_refuse");
      } else {
        refuse(attempt, std::move(record), "its program and arguments could not be read");
      }
      return;
    }
    if (!attempt.by_descriptor && !exists_for(attempt)) {
      // Not there (a shell trying each $PATH entry): the exec fails on its own, nothing ran.
      send_verdict(attempt.id, true);
      return;
    }
    NestedExecVerdict verdict = assess_nested_exec(*supervisor_->deps_.policies->current(), attempt.path, attempt.argv,
                                                   attempt.cwd);
    if (verdict.decision == policy::Decision::kPrompt && !may_ask()) {
      verdict.decision = policy::Decision::kForbidden;
      verdict.reason = std::string("needs approval, but approval_policy ") +
                       policy::approval_policy_name(supervisor_->deps_.config->approval_policy_for(owner_.agent_id)) +
                       " does not ask reviewers" + (verdict.reason.empty() ? "" : " (" + verdict.reason + ")");
    }
    record.decision = std::string(policy::decision_name(verdict.decision));
    record.rule = verdict.rule;
    if (verdict.decision == policy::Decision::kAllow) {
      finish(attempt, true, std::move(record), "ran");
    } else if (mode_ == config::ExecSupervision::kAudit) {
      finish(attempt, true, std::move(record),
             verdict.decision == policy::Decision::kForbidden ? "would_refuse" : "would_ask");
    } else if (verdict.decision == policy::Decision::kForbidden) {
      refuse(attempt, std::move(record), "forbidden by " + verdict.rule + (verdict.reason.empty() ? "" : ": " + verdict.reason));
    } else if (approved_for_session_.count(attempt.argv) != 0) {
      finish(attempt, true, std::move(record), "approved");
    } else {
      ask(std::move(attempt), std::move(record), verdict);
    }
  }

  // The path as the sandboxed process sees it, through its root. Only a missing file counts as
  // missing (anything else is decided and recorded).
  static bool exists_for(const sandbox::ExecAttempt& attempt) {
    struct stat st;
    return ::stat(("/proc/" + std::to_string(attempt.pid) + "/root" + attempt.path).c_str(), &st) == 0 ||
           (errno != ENOENT && errno != ENOTDIR);
  }

  // A prompt rule may reach a reviewer unless the agent's approval policy never asks.
  bool may_ask() const {
    const policy::ApprovalPolicy approval = supervisor_->deps_.config->approval_policy_for(owner_.agent_id);
    if (approval.kind == policy::ApprovalPolicyKind::kNever) return false;
    return approval.kind != policy::ApprovalPolicyKind::kGranular || approval.rules_approval;
  }

  // Walks up from the parent (at most kAncestorSteps) to the nearest process that exec'd here.
  pid_t traced_parent(pid_t parent) const {
    constexpr int kAncestorSteps = 16;
    for (int step = 0; step < kAncestorSteps && parent > 1; ++step) {
      if (traced_pids_.count(parent) != 0) return parent;
      parent = sandbox::parent_pid_of(parent);
    }
    return 0;
  }

  // Remembers the newest kTracedPids processes that exec'd (the ancestors looked for above).
  void remember(pid_t pid) {
    constexpr size_t kTracedPids = 4096;
    if (!traced_pids_.insert(pid).second) return;
    traced_order_.push_back(pid);
    if (traced_order_.size() > kTracedPids) {
      traced_pids_.erase(traced_order_.front());
      traced_order_.pop_front();
    }
  }

  ExecAuditRecord base_record(const sandbox::ExecAttempt& attempt) {
    ExecAuditRecord record;
    record.agent_id = owner_.agent_id;
    record.uid = owner_.uid;
    record.session_id = owner_.session_id;
    record.pid = attempt.pid;
    record.parent_pid = attempt.parent_pid;
    record.traced_parent_pid = traced_parent(attempt.parent_pid);
    remember(attempt.pid);
    record.path = attempt.path;
    record.argv = attempt.argv;
    record.decision = "allow";
    record.mode = config::exec_supervision_name(mode_);
    return record;
  }

  void refuse(const sandbox::ExecAttempt& attempt, ExecAuditRecord record, const std::string& why) {
    ++supervisor_->counts_.refused;
    // Told before the answer, so the line comes before whatever the caller prints about it;
    // once per process and argv (a shell tries /usr/bin/git, then /bin/git).
    if (last_told_ != std::make_pair(attempt.pid, attempt.argv)) {
      sandbox::tell_process(attempt.pid, "codexd: refused to run " + shell_quote(attempt.path) + ": " + why + "\n");
      last_told_ = {attempt.pid, attempt.argv};
    }
    finish(attempt, false, std::move(record), "refused");
  }

  void finish(const sandbox::ExecAttempt& attempt, bool allow, ExecAuditRecord record, std::string outcome) {
    send_verdict(attempt.id, allow);
    record.outcome = std::move(outcome);
    if (supervisor_->deps_.audit != nullptr) supervisor_->deps_.audit->record(record);
    supervisor_->append(owner_.session_id, record);
  }

  // A verdict the keeper cannot take yet (its socket is full) waits here, in order, until the
  // relay is writable: a lost one would leave its process in execve for good.
  void send_verdict(uint64_t id, bool allow) {
    if (unsent_.empty()) {
      Status sent = sandbox::answer_exec_attempt(relay_.native_handle(), id, allow);
      if (sent.ok()) return;
      if (sent.code() != StatusCode::kUnavailable) {
        spdlog::warn("exec supervision of session {}: {}", owner_.session_id, sent.message());
        return;
      }
    }
    unsent_.emplace_back(id, allow);
    if (unsent_.size() == 1) wait_writable();
  }
  void wait_writable() {
    relay_.async_wait(asio::posix::stream_descriptor::wait_write, [weak = weak_from_this()](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (ec || !self || !self->relay_.is_open()) return;
      while (!self->unsent_.empty()) {
        const auto [id, allow] = self->unsent_.front();
        Status sent = sandbox::answer_exec_attempt(self->relay_.native_handle(), id, allow);
        if (!sent.ok() && sent.code() == StatusCode::kUnavailable) {
          self->wait_writable();
          return;
        }
        self->unsent_.pop_front();
      }
    });
  }

  // A reviewer decides; the process waits in execve meanwhile (no daemon thread does).
  void ask(sandbox::ExecAttempt attempt, ExecAuditRecord record, const NestedExecVerdict& verdict) {
    ApprovalBroker& broker = *supervisor_->deps_.broker;
    ApprovalTicket ticket;
    ticket.requester_uid = owner_.uid;
    ticket.agent_id = owner_.agent_id;
    ticket.argv = attempt.argv;
    ticket.cmd = shell_join(attempt.argv);
    ticket.workdir = attempt.cwd;
    std::string where = owner_.session_id > 0 ? "session " + std::to_string(owner_.session_id) : "a one-shot command";
    ticket.reason = {ApprovalReason::Kind::kPromptRule,
                     "nested exec of " + attempt.path + " by pid " + std::to_string(attempt.pid) + " in " + where +
                         " (" + owner_.command + "): " + verdict.rule + " requires approval",
                     verdict.reason};
    ticket.nested = NestedExecText{owner_.session_id, owner_.command, attempt.pid, attempt.path};
    if (Status room = broker.has_room(ticket); !room.ok()) {
      refuse(attempt, std::move(record), "needs approval, and no reviewer can be asked now: " + room.message());
      return;
    }
    ++supervisor_->counts_.asked;
    // The broker may answer at once (a restored approval it already has an answer for).
    struct Asked {
      std::string id;
      bool answered = false;
    };
    auto asked = std::make_shared<Asked>();
    asked->id = broker.request(std::move(ticket), [weak = weak_from_this(), attempt, record, asked](const ApprovalOutcome& outcome) mutable {
      asked->answered = true;
      auto self = weak.lock();
      if (!self) return;
      self->asked_.erase(asked->id);
      self->answered(attempt, std::move(record), outcome);
    });
    if (!asked->answered) asked_.insert(asked->id);
  }

  void answered(const sandbox::ExecAttempt& attempt, ExecAuditRecord record, const ApprovalOutcome& outcome) {
    if (!relay_.is_open()) return;
    const bool decided = outcome.kind == ApprovalOutcome::Kind::kDecided;
    if (decided && outcome.decision == ReviewDecision::kApprovedForSession) approved_for_session_.insert(attempt.argv);
    const bool approved = decided && (outcome.decision == ReviewDecision::kApproved ||
                                      outcome.decision == ReviewDecision::kApprovedForSession ||
                                      outcome.decision == ReviewDecision::kApprovedWithAmendment);
    if (approved) {
      finish(attempt, true, std::move(record), "approved");
      return;
    }
    ++supervisor_->counts_.refused;
    const std::string why = decided ? "a reviewer denied it" : std::string("no reviewer answered (") + outcome_source_name(outcome.kind) + ")";
    sandbox::tell_process(attempt.pid, "codexd: refused to run " + shell_quote(attempt.path) + ": " + why + "\n");
    finish(attempt, false, std::move(record), "denied");
  }

  std::shared_ptr<ExecSupervisor> supervisor_;
  asio::posix::stream_descriptor relay_;
  exec::ChannelOwner owner_;
  config::ExecSupervision mode_;
  bool seen_command_ = false;
  std::pair<pid_t, std::vector<std::string>> last_told_;
  std::set<pid_t> traced_pids_;
  std::deque<pid_t> traced_order_;
  std::set<std::string> asked_;  // approval ids still open
  std::set<std::vector<std::string>> approved_for_session_;
  std::deque<std::pair<uint64_t, bool>> unsent_;  // verdicts waiting for room in the relay
};

namespace {

// What the session holds: dropping it stops the watch (on the core thread, where it lives).
class WatchLease {
 public:
  WatchLease(asio::io_context& core, std::shared_ptr<void> watch, std::function<void()> stop)
      : core_(core), watch_(std::move(watch)), stop_(std::move(stop)) {}
  ~WatchLease() { asio::post(core_, [watch = std::move(watch_), stop = std::move(stop_)] { stop(); }); }
  WatchLease(const WatchLease&) = delete;
  WatchLease& operator=(const WatchLease&) = delete;

 private:
  asio::io_context& core_;
  std::shared_ptr<void> watch_;
  std::function<void()> stop_;
};

}  // namespace

ExecTrace* ExecSupervisor::open_trace(const exec::ChannelOwner& owner, config::ExecSupervision mode) {
  if (owner.session_id <= 0) return nullptr;
  ExecTrace& trace = traces_[owner.session_id];
  trace = ExecTrace{};
  trace.uid = owner.uid;
  trace.agent_id = owner.agent_id;
  trace.mode = config::exec_supervision_name(mode);
  std::erase(ended_, owner.session_id);
  return &trace;
}

void ExecSupervisor::append(int session_id, const ExecAuditRecord& record) {
  auto it = traces_.find(session_id);
  if (it == traces_.end()) return;
  ExecTrace& trace = it->second;
  TracedExec traced;
  traced.at_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
  traced.record = record;
  // Cut as the audit log cuts it: a trace is for reading, not a copy of every argument.
  traced.record.path = traced.record.path.substr(0, 4096);
  if (traced.record.argv.size() > 64) traced.record.argv.resize(64);
  size_t size = 128 + traced.record.path.size() + traced.record.rule.size();
  for (std::string& word : traced.record.argv) {
    if (word.size() > 256) word.resize(256);
    size += word.size() + 16;
  }
  trace.execs.push_back(std::move(traced));
  trace.bytes += size;
  while (trace.bytes > ExecTrace::kTraceBytes && trace.execs.size() > 1) {
    const TracedExec& oldest = trace.execs.front();
    size_t old = 128 + oldest.record.path.size() + oldest.record.rule.size();
    for (const std::string& word : oldest.record.argv) old += word.size() + 16;
    trace.bytes -= std::min(trace.bytes, old);
    trace.execs.pop_front();
    ++trace.dropped;
  }
}

void ExecSupervisor::close_trace(int session_id) {
  auto it = traces_.find(session_id);
  if (it == traces_.end() || it->second.ended) return;
  it->second.ended = true;
  ended_.push_back(session_id);
  while (ended_.size() > kEndedTraces) {
    traces_.erase(ended_.front());
    ended_.pop_front();
  }
}

Result<const ExecTrace*> ExecSupervisor::trace(int session_id, uid_t caller, bool admin) const {
  auto it = traces_.find(session_id);
  if (it == traces_.end() || (!admin && it->second.uid != caller)) {
    return NotFound("no exec trace for session " + std::to_string(session_id) +
                    ": only sandboxed sessions started with [exec] exec_supervision on have one, and a daemon "
                    "keeps the traces of the last " + std::to_string(kEndedTraces) + " ended ones");
  }
  return &it->second;
}

std::shared_ptr<void> ExecSupervisor::supervise(UniqueFd relay, exec::ChannelOwner owner) {
  const config::ExecSupervision mode = deps_.config->exec_supervision_for(owner.agent_id);
  auto watch = std::make_shared<Watch>(shared_from_this(), std::move(relay), std::move(owner),
                                       mode == config::ExecSupervision::kOff ? config::ExecSupervision::kAudit : mode);
  watch->start();
  return std::make_shared<WatchLease>(*deps_.core, watch, [watch] { watch->stop(); });
}

}  // namespace codexd::orchestrator
