#include "daemon/orchestrator/audit_log.h"

#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>
#include <sys/uio.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <spdlog/details/file_helper.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <vector>

#include "base/utf8.h"

#ifdef CODEXD_HAVE_SYSTEMD
#include <systemd/sd-journal.h>
#endif

namespace codexd::orchestrator {

// The audit file, reopened by path on SIGHUP: logrotate renames it, the daemon then writes a
// new file under the old name (docs/service.md; packaging/logrotate/codexd).
class ReopenableFileSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit ReopenableFileSink(const std::string& path) { file_.open(path, false); }

  Status reopen() {
    std::lock_guard lock(mutex_);
    try {
      file_.reopen(false);
    } catch (const std::exception& e) {
      return Unavailable(std::string("cannot reopen the audit log: ") + e.what());
    }
    return Status::Ok();
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(message, formatted);
    file_.write(formatted);
  }
  void flush_() override { file_.flush(); }

 private:
  spdlog::details::file_helper file_;
};

namespace {

#ifdef CODEXD_HAVE_SYSTEMD
// The journal gets the line as MESSAGE and each field as CODEXD_<NAME>, so
// `journalctl SYSLOG_IDENTIFIER=codexd-audit CODEXD_DECISION=denied` selects without parsing.
void send_to_journal(const nlohmann::ordered_json& line, const std::string& text) {
  std::vector<std::string> fields = {"MESSAGE=" + text, "SYSLOG_IDENTIFIER=codexd-audit", "PRIORITY=6"};
  for (const auto& [key, value] : line.items()) {
    std::string name = "CODEXD_";
    for (char c : key) name += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : '_';
    const std::string rendered = value.is_string() ? value.get<std::string>()
                                                   : value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    fields.push_back(name + "=" + rendered);
  }
  std::vector<iovec> parts;
  for (std::string& field : fields) parts.push_back({field.data(), field.size()});
  sd_journal_sendv(parts.data(), static_cast<int>(parts.size()));
}
#endif

}  // namespace

Result<std::unique_ptr<AuditLog>> AuditLog::open(const std::string& file, bool journald) {
  std::unique_ptr<AuditLog> log(new AuditLog());
  log->secret_.resize(32);
  if (::getrandom(log->secret_.data(), log->secret_.size(), 0) != static_cast<ssize_t>(log->secret_.size())) {
    return Internal("getrandom failed for the audit secret");
  }
  if (!file.empty()) {
    try {
      auto sink = std::make_shared<ReopenableFileSink>(file);
      log->file_sink_ = sink;
      log->logger_ = std::make_shared<spdlog::logger>("audit", sink);
      log->logger_->set_pattern("%v");
      log->logger_->flush_on(spdlog::level::info);
    } catch (const std::exception& e) {
      return Unavailable(std::string("cannot open audit log: ") + e.what());
    }
  }
#ifdef CODEXD_HAVE_SYSTEMD
  log->journald_ = journald;
#else
  if (journald) return Unimplemented("journald audit needs libsystemd");
#endif
  return log;
}

AuditLog::~AuditLog() { flush(); }

std::string AuditLog::hash_call_id(const std::string& call_id) const {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
       reinterpret_cast<const unsigned char*>(call_id.data()), call_id.size(), digest, &len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < 16 && i < len; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xF];
  }
  return out;
}

namespace {

// The fields every audit line starts with, in this order.
nlohmann::ordered_json line_head(const std::string& tool, const std::string& agent_id, uid_t uid) {
  nlohmann::ordered_json line;
  line["ts"] = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  line["tool"] = tool;
  line["agent_id"] = agent_id;
  line["uid"] = uid;
  return line;
}

}  // namespace

void AuditLog::record(const AuditRecord& r) {
  if (!logger_ && !journald_) return;
  nlohmann::ordered_json line = line_head(r.tool, r.agent_id, r.uid);
  line["turn_id"] = r.turn_id;
  line["call_id_hash"] = r.call_id.empty() ? "" : hash_call_id(r.call_id);
  line["approval_policy"] = r.approval_policy;
  line["requirement"] = r.requirement;
  line["reviewed"] = r.reviewed;
  if (r.reviewer_uid) line["reviewer_uid"] = *r.reviewer_uid;
  if (!r.reviewer_agent.empty()) line["reviewer_agent"] = r.reviewer_agent;
  line["decision"] = r.decision;
  line["sandbox_override"] = r.sandbox_override;
  line["initial_sandbox"] = r.initial_sandbox;
  line["attempt"] = r.attempt;
  line["outcome"] = r.outcome;
  if (r.exit_code) line["exit_code"] = *r.exit_code;
  if (!r.termination.empty()) line["termination"] = r.termination;
  if (r.usage && r.usage->known) {
    line["peak_memory_bytes"] = r.usage->peak_memory_bytes;
    line["cpu_user_usec"] = r.usage->cpu_user_usec;
    line["cpu_system_usec"] = r.usage->cpu_system_usec;
    line["peak_processes"] = r.usage->peak_processes;
  }
  line["approval_wait_ms"] = static_cast<int64_t>(r.approval_wait_ms);
  line["duration_ms"] = static_cast<int64_t>(r.duration_ms);
  emit(line);
}

void AuditLog::record(const NetworkAuditRecord& r) {
  if (!logger_ && !journald_) return;
  nlohmann::ordered_json line = line_head("network", r.agent_id, r.uid);
  line["session_id"] = r.session_id;
  line["host"] = r.host;
  line["port"] = r.port;
  line["protocol"] = r.protocol;
  line["decision"] = r.allowed ? "allowed" : "denied";
  line["reason"] = r.reason;
  line["address"] = r.address;
  line["bytes_up"] = r.bytes_up;
  line["bytes_down"] = r.bytes_down;
  line["duration_ms"] = r.duration_ms;
  if (!r.error.empty()) line["error"] = r.error;
  emit(line);
}

void AuditLog::record(const ExecAuditRecord& r) {
  if (!logger_ && !journald_) return;
  constexpr size_t kWordBytes = 256;
  constexpr size_t kWords = 64;
  nlohmann::ordered_json line = line_head("exec", r.agent_id, r.uid);
  line["session_id"] = r.session_id;
  line["pid"] = r.pid;
  line["parent_pid"] = r.parent_pid;
  if (r.traced_parent_pid != 0 && r.traced_parent_pid != r.parent_pid) line["traced_parent_pid"] = r.traced_parent_pid;
  line["path"] = utf8_lossy(r.path.substr(0, 4096));
  nlohmann::ordered_json words = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.argv.size() && i < kWords; ++i) words.push_back(utf8_lossy(r.argv[i].substr(0, kWordBytes)));
  line["argv"] = std::move(words);
  if (r.argv.size() > kWords) line["argv_more"] = r.argv.size() - kWords;
  line["command"] = r.command;
  line["decision"] = r.decision;
  line["outcome"] = r.outcome;
  if (!r.rule.empty()) line["rule"] = r.rule;
  line["mode"] = r.mode;
  emit(line);
}

void AuditLog::record(const DaemonAuditRecord& r) {
  if (!logger_ && !journald_) return;
  nlohmann::ordered_json line = line_head("daemon", "", ::geteuid());
  line["event"] = r.event;
  line["detail"] = r.detail;
  emit(line);
}

void AuditLog::record(const ApprovalStateAuditRecord& r) {
  if (!logger_ && !journald_) return;
  nlohmann::ordered_json line = line_head("daemon", "", ::geteuid());
  line["event"] = r.event == ApprovalStateAuditRecord::Event::kRestored ? "approvals_restored" : "approval_state_corrupt";
  line["state_file"] = r.state_file;
  if (r.event == ApprovalStateAuditRecord::Event::kRestored) {
    line["pending_restored"] = r.pending;
    line["resolved_restored"] = r.resolved;
    line["timed_out_while_down"] = r.timed_out;
    line["grants_restored"] = r.grants;
  } else {
    line["reason"] = r.reason;
    line["moved_to"] = r.moved_to;
  }
  emit(line);
}

void AuditLog::emit(const nlohmann::ordered_json& line) {
  const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (logger_) logger_->info(text);
#ifdef CODEXD_HAVE_SYSTEMD
  if (journald_) send_to_journal(line, text);
#endif
}

Status AuditLog::reopen() {
  if (!file_sink_) return Status::Ok();
  return file_sink_->reopen();
}

void AuditLog::flush() {
  if (logger_) logger_->flush();
}

}  // namespace codexd::orchestrator
