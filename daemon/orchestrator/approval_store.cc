#include "daemon/orchestrator/approval_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <string>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "policies/decision.h"

namespace codexd::orchestrator {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::system_clock;

int64_t to_ms(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
Clock::time_point from_ms(int64_t ms) { return Clock::time_point(std::chrono::milliseconds(ms)); }

const char* reason_kind_name(ApprovalReason::Kind kind) {
  switch (kind) {
    case ApprovalReason::Kind::kPromptRule: return "prompt_rule";
    case ApprovalReason::Kind::kHeuristic: return "heuristic";
    case ApprovalReason::Kind::kEscalation: return "escalation";
    case ApprovalReason::Kind::kSandboxRetry: return "sandbox_retry";
    case ApprovalReason::Kind::kNetwork: return "network";
  }
  return "unknown";
}

// A malformed file: parse_approval_state turns this into a Status.
struct Malformed {
  std::string what;
};

template <typename Enum, size_t N>
Enum parse_enum(const std::string& text, const Enum (&values)[N], const char* (*name)(Enum), const char* field) {
  for (Enum v : values) {
    if (text == name(v)) return v;
  }
  throw Malformed{std::string("unknown ") + field + " \"" + text + "\""};
}

constexpr ApprovalReason::Kind kReasonKinds[] = {ApprovalReason::Kind::kPromptRule, ApprovalReason::Kind::kHeuristic,
                                                 ApprovalReason::Kind::kEscalation, ApprovalReason::Kind::kSandboxRetry,
                                                 ApprovalReason::Kind::kNetwork};
constexpr ReviewDecision kDecisions[] = {ReviewDecision::kApproved, ReviewDecision::kApprovedForSession,
                                         ReviewDecision::kDenied, ReviewDecision::kAbort,
                                         ReviewDecision::kApprovedWithAmendment};
constexpr ApprovalOutcome::Kind kOutcomeKinds[] = {ApprovalOutcome::Kind::kDecided, ApprovalOutcome::Kind::kTimedOut,
                                                   ApprovalOutcome::Kind::kNoReviewer,
                                                   ApprovalOutcome::Kind::kRequesterGone,
                                                   ApprovalOutcome::Kind::kShutdown};

const char* policy_decision_name(policy::Decision d) {
  switch (d) {
    case policy::Decision::kAllow: return "allow";
    case policy::Decision::kPrompt: return "prompt";
    case policy::Decision::kForbidden: return "forbidden";
  }
  return "unknown";
}

json ticket_json(const ApprovalTicket& t) {
  json j;
  j["id"] = t.id;
  j["uid"] = t.requester_uid;
  j["agent_id"] = t.agent_id;
  j["argv"] = t.argv.words();
  j["cmd"] = t.cmd;
  j["workdir"] = t.workdir;
  j["reason"] = {{"kind", reason_kind_name(t.reason.kind)},
                 {"message", t.reason.message},
                 {"justification", t.reason.justification}};
  json rules = json::array();
  for (const auto& m : t.matched_rules) {
    json r;
    r["matched_prefix"] = m.matched_prefix.words();
    r["decision"] = policy_decision_name(m.decision);
    if (m.resolved_program) r["resolved_program"] = *m.resolved_program;
    if (m.justification) r["justification"] = *m.justification;
    r["heuristic"] = m.heuristic;
    r["source"] = m.source;
    rules.push_back(std::move(r));
  }
  j["matched_rules"] = std::move(rules);
  j["sandbox"] = {{"backend", t.sandbox.backend},
                  {"mode", t.sandbox.mode},
                  {"writable_roots", t.sandbox.writable_roots},
                  {"network", std::string(sandbox::to_string(t.sandbox.network))},
                  {"denied_read", t.sandbox.denied_read},
                  {"protected_paths", t.sandbox.protected_paths}};
  j["created_at_ms"] = to_ms(t.created_at);
  if (t.expires_at) j["expires_at_ms"] = to_ms(*t.expires_at);
  j["turn_id"] = t.turn_id;
  j["call_id"] = t.call_id;
  j["tty"] = t.tty;
  j["proposed_amendment"] = t.proposed_amendment.words();
  j["attempt"] = t.attempt;
  return j;
}

// Field access that names what is wrong (nlohmann's own messages say neither field nor entry).
template <typename T>
T field(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end()) throw Malformed{std::string("missing field \"") + name + "\""};
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw Malformed{std::string("field \"") + name + "\" has the wrong type"};
  }
}

const json& object_field(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_object()) throw Malformed{std::string("missing object \"") + name + "\""};
  return *it;
}

// A heuristic match and an amendment are often the whole command: read back, they share the
// ticket's argv again rather than each keeping a copy (issue 19 item 5).
SharedArgv words_of(const json& j, const char* name, const SharedArgv& argv) {
  auto words = field<std::vector<std::string>>(j, name);
  if (!argv.empty() && words == argv.words()) return argv;
  return words;
}

ApprovalTicket ticket_from(const json& j) {
  if (!j.is_object()) throw Malformed{"an approval is not an object"};
  ApprovalTicket t;
  t.id = field<std::string>(j, "id");
  if (t.id.empty()) throw Malformed{"an approval has an empty id"};
  t.requester_uid = field<uid_t>(j, "uid");
  t.agent_id = field<std::string>(j, "agent_id");
  t.argv = field<std::vector<std::string>>(j, "argv");
  t.cmd = field<std::string>(j, "cmd");
  t.workdir = field<std::string>(j, "workdir");
  const json& reason = object_field(j, "reason");
  t.reason.kind = parse_enum(field<std::string>(reason, "kind"), kReasonKinds, reason_kind_name, "reason kind");
  t.reason.message = field<std::string>(reason, "message");
  t.reason.justification = field<std::string>(reason, "justification");
  auto rules = j.find("matched_rules");
  if (rules == j.end() || !rules->is_array()) throw Malformed{"missing array \"matched_rules\""};
  for (const auto& r : *rules) {
    if (!r.is_object()) throw Malformed{"a matched rule is not an object"};
    policy::RuleMatch m;
    m.matched_prefix = words_of(r, "matched_prefix", t.argv);
    auto decision = policy::parse_decision(field<std::string>(r, "decision"));
    if (!decision) throw Malformed{"unknown rule decision"};
    m.decision = *decision;
    if (r.contains("resolved_program")) m.resolved_program = field<std::string>(r, "resolved_program");
    if (r.contains("justification")) m.justification = field<std::string>(r, "justification");
    m.heuristic = field<bool>(r, "heuristic");
    m.source = field<std::string>(r, "source");
    t.matched_rules.push_back(std::move(m));
  }
  const json& sb = object_field(j, "sandbox");
  t.sandbox.backend = field<std::string>(sb, "backend");
  t.sandbox.mode = field<std::string>(sb, "mode");
  t.sandbox.writable_roots = field<std::vector<std::string>>(sb, "writable_roots");
  auto network = sandbox::parse_network_mode(field<std::string>(sb, "network"));
  if (!network) throw Malformed{"unknown sandbox network mode"};
  t.sandbox.network = *network;
  t.sandbox.denied_read = field<std::vector<std::string>>(sb, "denied_read");
  t.sandbox.protected_paths = field<std::vector<std::string>>(sb, "protected_paths");
  t.created_at = from_ms(field<int64_t>(j, "created_at_ms"));
  if (j.contains("expires_at_ms")) t.expires_at = from_ms(field<int64_t>(j, "expires_at_ms"));
  t.turn_id = field<std::string>(j, "turn_id");
  t.call_id = field<std::string>(j, "call_id");
  t.tty = field<bool>(j, "tty");
  t.proposed_amendment = words_of(j, "proposed_amendment", t.argv);
  t.attempt = field<unsigned>(j, "attempt");
  return t;
}

json outcome_json(const ApprovalOutcome& o, Clock::time_point resolved_at) {
  json j;
  j["source"] = outcome_source_name(o.kind);
  j["decision"] = review_decision_name(o.decision);
  if (o.resolved_by) j["resolved_by"] = *o.resolved_by;
  if (!o.resolved_by_agent.empty()) j["resolved_by_agent"] = o.resolved_by_agent;
  j["rationale"] = o.rationale;
  j["resolved_at_ms"] = to_ms(resolved_at);
  return j;
}

ApprovalOutcome outcome_from(const json& j, Clock::time_point* resolved_at) {
  if (!j.is_object()) throw Malformed{"an outcome is not an object"};
  ApprovalOutcome o;
  o.kind = parse_enum(field<std::string>(j, "source"), kOutcomeKinds, outcome_source_name, "outcome source");
  o.decision = parse_enum(field<std::string>(j, "decision"), kDecisions, review_decision_name, "decision");
  if (j.contains("resolved_by")) o.resolved_by = field<uid_t>(j, "resolved_by");
  if (j.contains("resolved_by_agent")) o.resolved_by_agent = field<std::string>(j, "resolved_by_agent");
  o.rationale = field<std::string>(j, "rationale");
  *resolved_at = from_ms(field<int64_t>(j, "resolved_at_ms"));
  return o;
}

Status ensure_directory(const std::string& dir) {
  if (dir.empty() || dir[0] != '/') return InvalidArgument("the state directory must be an absolute path: " + dir);
  // Every missing component is created 0755 (by the daemon's uid: root in system mode): the
  // state directory also holds the agents' private /tmp base, which users must traverse;
  // the file itself is 0600.
  for (size_t pos = 1;; ++pos) {
    pos = dir.find('/', pos);
    const std::string part = pos == std::string::npos ? dir : dir.substr(0, pos);
    if (!part.empty() && ::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoStatus("creating " + part, errno);
    }
    if (pos == std::string::npos) break;
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return ErrnoStatus("stat " + dir, errno);
  if (S_ISLNK(st.st_mode)) {
    // A symlinked state directory is the administrator's choice; follow it, but it must end
    // in a directory.
    if (::stat(dir.c_str(), &st) != 0) return ErrnoStatus("stat " + dir, errno);
  }
  if (!S_ISDIR(st.st_mode)) return FailedPrecondition(dir + " is not a directory");
  return Status::Ok();
}

}  // namespace

namespace {

// The JSON of a file; the byte offset of a syntax error, not nlohmann's message (which quotes
// the file's text: commands).
Result<json> parse_json(std::string_view text) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    return Status(StatusCode::kDataLoss, "not valid JSON (truncated or corrupt) at byte " + std::to_string(e.byte));
  }
}

json stored_approval_json(const StoredApprovalRef& a) {
  json j = ticket_json(*a.ticket);
  if (a.outcome) j["outcome"] = outcome_json(*a.outcome, a.resolved_at.value_or(Clock::now()));
  return j;
}
json stored_approval_json(const StoredApproval& a) { return stored_approval_json(StoredApprovalRef{&a.ticket, a.outcome, a.resolved_at}); }

// Throws Malformed.
StoredApproval stored_approval_from(const json& j) {
  StoredApproval a;
  a.ticket = ticket_from(j);
  if (j.contains("outcome")) {
    Clock::time_point at;
    a.outcome = outcome_from(j["outcome"], &at);
    a.resolved_at = at;
  }
  return a;
}

}  // namespace

std::string serialize_approval_state(const StoredState& state) {
  json root;
  root["version"] = kApprovalStateVersion;
  json approvals = json::array();
  for (const auto& a : state.approvals) approvals.push_back(stored_approval_json(a));
  root["approvals"] = std::move(approvals);
  json grants = json::array();
  for (const auto& g : state.grants) {
    grants.push_back({{"uid", g.uid}, {"agent_id", g.agent_id}, {"keys", g.keys}});
  }
  root["grants"] = std::move(grants);
  return root.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<StoredState> parse_approval_state(std::string_view text) {
  CODEXD_ASSIGN_OR_RETURN(json root, parse_json(text));
  if (!root.is_object()) return Status(StatusCode::kDataLoss, "the top level is not a JSON object");
  auto version = root.find("version");
  if (version == root.end()) return Status(StatusCode::kDataLoss, "no \"version\" field");
  if (!version->is_number_integer() || version->get<int64_t>() != kApprovalStateVersion) {
    const std::string seen = version->is_number() ? version->dump() : std::string("of type ") + version->type_name();
    return FailedPrecondition("unknown version " + seen + " (this daemon reads version " +
                              std::to_string(kApprovalStateVersion) + ")");
  }
  StoredState state;
  try {
    auto approvals = root.find("approvals");
    if (approvals == root.end() || !approvals->is_array()) throw Malformed{"missing array \"approvals\""};
    for (const auto& j : *approvals) state.approvals.push_back(stored_approval_from(j));
    auto grants = root.find("grants");
    if (grants == root.end() || !grants->is_array()) throw Malformed{"missing array \"grants\""};
    for (const auto& j : *grants) {
      if (!j.is_object()) throw Malformed{"a grant is not an object"};
      StoredGrants g;
      g.uid = field<uid_t>(j, "uid");
      g.agent_id = field<std::string>(j, "agent_id");
      g.keys = field<std::vector<std::string>>(j, "keys");
      state.grants.push_back(std::move(g));
    }
  } catch (const Malformed& m) {
    return Status(StatusCode::kDataLoss, m.what);
  }
  return state;
}

namespace {
std::string serialize_approval(const StoredApprovalRef& a) {
  return stored_approval_json(a).dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}
}  // namespace

std::string serialize_stored_approval(const StoredApproval& a) {
  return serialize_approval(StoredApprovalRef{&a.ticket, a.outcome, a.resolved_at});
}

Result<StoredApproval> parse_stored_approval(std::string_view text) {
  CODEXD_ASSIGN_OR_RETURN(json j, parse_json(text));
  try {
    return stored_approval_from(j);
  } catch (const Malformed& m) {
    return Status(StatusCode::kDataLoss, m.what);
  }
}

Status write_file_atomically(const std::string& path, const std::string& text) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos || slash == 0 ? (slash == 0 ? "/" : ".") : path.substr(0, slash);
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  ::unlink(tmp.c_str());  // a leftover of a crashed write (never followed: unlink removes a link itself)
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoStatus("creating " + tmp, errno);
  auto fail = [&](const std::string& what) {
    Status s = ErrnoStatus(what, errno);
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  };
  if (::fchmod(fd, 0600) != 0) return fail("chmod " + tmp);  // whatever the umask
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("writing " + tmp);
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return fail("fsync " + tmp);
  if (::close(fd) != 0) {
    Status s = ErrnoStatus("closing " + tmp, errno);
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = ErrnoStatus("renaming " + tmp + " to " + path, errno);
    ::unlink(tmp.c_str());
    return s;
  }
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return ErrnoStatus("opening " + dir, errno);
  Status synced = ::fsync(dfd) == 0 ? Status::Ok() : ErrnoStatus("fsync " + dir, errno);
  ::close(dfd);
  return synced;
}

namespace {

// An approval id as a file name: what the broker makes ("apr_" and hex), nothing that could
// leave the directory or hide.
bool is_file_safe_id(const std::string& id) {
  if (id.empty() || id.size() > 64 || id[0] == '.') return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

Status fsync_directory(const std::string& dir) {
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return ErrnoStatus("opening " + dir, errno);
  Status synced = ::fsync(dfd) == 0 ? Status::Ok() : ErrnoStatus("fsync " + dir, errno);
  ::close(dfd);
  return synced;
}

// The whole of a regular file that is not a symbolic link; a reason otherwise.
Result<std::string> read_plain_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ELOOP) return Status(StatusCode::kDataLoss, "it is a symbolic link");
    return ErrnoStatus("opening " + path, errno);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status(StatusCode::kDataLoss, "it is not a regular file");
  }
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status s = ErrnoStatus("reading " + path, errno);
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace

ApprovalStore::ApprovalStore(std::string dir)
    : dir_(std::move(dir)), path_(dir_ + "/approvals.json"), approvals_dir_(dir_ + "/approvals.d") {}

std::string ApprovalStore::file_of(const std::string& id) const { return approvals_dir_ + "/" + id + ".json"; }

// approvals.d/<id>.json, each one approval. A file that cannot be used is moved aside
// (<name>.corrupt-<unix time>) and reported; the others still load.
void ApprovalStore::load_approval_files(LoadedApprovalState& loaded) {
  DIR* dir = ::opendir(approvals_dir_.c_str());
  if (dir == nullptr) return;  // none yet (or unreadable: the next write says so)
  loaded.found = true;
  std::vector<std::string> names;
  while (dirent* entry = ::readdir(dir)) names.emplace_back(entry->d_name);
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(Clock::now().time_since_epoch()).count();
  for (const std::string& name : names) {
    const std::string path = approvals_dir_ + "/" + name;
    if (name.find(".json.tmp-") != std::string::npos) {
      ::unlink(path.c_str());  // a write a crash interrupted: the file before it is intact
      continue;
    }
    if (name.size() <= 5 || name.compare(name.size() - 5, 5, ".json") != 0) continue;
    const std::string id = name.substr(0, name.size() - 5);
    if (!is_file_safe_id(id)) continue;
    auto text = read_plain_file(path);
    Result<StoredApproval> approval = text.ok() ? parse_stored_approval(*text) : Result<StoredApproval>(text.status());
    if (approval.ok() && approval->ticket.id != id) {
      approval = Status(StatusCode::kDataLoss, "it holds approval " + approval->ticket.id);
    }
    if (!approval.ok()) {
      const std::string aside = path + ".corrupt-" + std::to_string(now);
      const bool moved = ::rename(path.c_str(), aside.c_str()) == 0;
      spdlog::error("saved approval {} is unusable ({}); {}", path, approval.status().message(),
                    moved ? "moved to " + aside : "left in place");
      loaded.set_aside.push_back(name + ": " + approval.status().message());
      continue;
    }
    on_disk_[id] = approval->outcome.has_value();
    // Its file is newer than an entry of the same id in an earlier daemon's approvals.json.
    std::erase_if(loaded.state.approvals, [&](const StoredApproval& a) { return a.ticket.id == id; });
    loaded.state.approvals.push_back(std::move(*approval));
  }
}

Status ApprovalStore::ensure_dir() { return ensure_directory(dir_); }

Result<LoadedApprovalState> ApprovalStore::load() {
  if (Status dir = ensure_dir(); !dir.ok()) {
    // Nothing can be saved either: GetStatus says so from the start, not only after a first
    // failed save.
    Status unusable = dir.with_context("approval state directory");
    last_error_ = unusable.message();
    return unusable;
  }
  LoadedApprovalState loaded;
  std::string problem;
  Result<std::string> text = read_plain_file(path_);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      load_approval_files(loaded);
      return loaded;
    }
    if (text.status().code() != StatusCode::kDataLoss) return text.status();
    problem = text.status().message();  // a symbolic link, not a regular file
  }
  loaded.found = true;
  if (problem.empty()) {
    auto parsed = parse_approval_state(*text);
    if (parsed.ok()) {
      loaded.state = std::move(parsed).value();
      state_.grants = loaded.state.grants;
      // Approvals inside approvals.json: the single-file layout before approvals.d. They are
      // taken as they are and move to their own files at the first change.
      main_holds_approvals_ = !loaded.state.approvals.empty();
      load_approval_files(loaded);
      return loaded;
    }
    problem = parsed.status().message();
  }
  load_approval_files(loaded);
  loaded.corrupt_reason = problem;
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(Clock::now().time_since_epoch()).count();
  loaded.moved_to = path_ + ".corrupt-" + std::to_string(now);
  if (::rename(path_.c_str(), loaded.moved_to.c_str()) != 0) {
    spdlog::error("approval state {} is unusable ({}) and could not be moved aside: {}", path_, problem,
                  ErrnoStatus("rename", errno).message());
    loaded.moved_to.clear();
  } else {
    spdlog::error("approval state {} is unusable ({}); moved to {}; starting without what it held", path_,
                  problem, loaded.moved_to);
  }
  return loaded;
}

// Only what changed is written: a new approval's file, a resolved one's (its outcome), and
// the files of approvals that are gone are removed. A ticket never changes under its id, so
// an approval already on disk in the same state is not written again.
void ApprovalStore::set_approvals(const std::vector<StoredApproval>& approvals) {
  std::vector<StoredApprovalRef> refs;
  refs.reserve(approvals.size());
  for (const StoredApproval& a : approvals) refs.push_back({&a.ticket, a.outcome, a.resolved_at});
  set_approval_refs(refs);
}

void ApprovalStore::set_approval_refs(const std::vector<StoredApprovalRef>& approvals) {
  if (frozen_) return;
  Status written = ensure_dir();
  if (written.ok() && ::mkdir(approvals_dir_.c_str(), 0700) != 0 && errno != EEXIST) {
    written = ErrnoStatus("creating " + approvals_dir_, errno);
  }
  std::set<std::string> current;
  for (const StoredApprovalRef& a : approvals) {
    if (!written.ok()) break;
    const std::string& id = a.ticket->id;
    if (!is_file_safe_id(id)) {
      spdlog::warn("approval id \"{}\" cannot name a file; it is not saved", id);
      continue;
    }
    current.insert(id);
    const bool resolved = a.outcome.has_value();
    auto it = on_disk_.find(id);
    if (it != on_disk_.end() && it->second == resolved) continue;
    written = write_file_atomically(file_of(id), serialize_approval(a));
    if (written.ok()) on_disk_[id] = resolved;
  }
  bool removed = false;
  for (auto it = on_disk_.begin(); written.ok() && it != on_disk_.end();) {
    if (current.count(it->first)) {
      ++it;
      continue;
    }
    if (::unlink(file_of(it->first).c_str()) != 0 && errno != ENOENT) {
      written = ErrnoStatus("removing " + file_of(it->first), errno);
      break;
    }
    it = on_disk_.erase(it);
    removed = true;
  }
  if (written.ok() && removed) written = fsync_directory(approvals_dir_);
  if (!written.ok()) {
    last_error_ = written.message();
    spdlog::error("could not save the approval state: {}", last_error_);
    return;
  }
  if (main_holds_approvals_) {
    save();  // approvals.json without the approvals that now have files of their own
    if (last_error_.empty()) main_holds_approvals_ = false;
    return;
  }
  last_error_.clear();
}

void ApprovalStore::set_grants(std::vector<StoredGrants> grants) {
  state_.grants = std::move(grants);
  save();
}

void ApprovalStore::save() {
  if (frozen_) return;
  Status written = ensure_dir();
  if (written.ok()) written = write_file_atomically(path_, serialize_approval_state(StoredState{{}, state_.grants}));
  if (!written.ok()) {
    last_error_ = "writing " + path_ + ": " + written.message();
    spdlog::error("could not save the approval state: {}", last_error_);
    return;
  }
  last_error_.clear();
}

}  // namespace codexd::orchestrator
