#include "client/approvals_format.h"

#include <algorithm>
#include <cstdio>

#include "base/shell_quote.h"
#include "base/utf8.h"

namespace codexd::client {
namespace {

bool is_wide(uint32_t cp) {
  return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF && cp != 0x303F) ||
         (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) ||
         (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) ||
         (cp >= 0x1F900 && cp <= 0x1F9FF) || (cp >= 0x20000 && cp <= 0x3FFFD);
}

bool is_combining(uint32_t cp) {
  return (cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x1AB0 && cp <= 0x1AFF) || (cp >= 0x1DC0 && cp <= 0x1DFF) ||
         (cp >= 0x20D0 && cp <= 0x20FF) || (cp >= 0xFE20 && cp <= 0xFE2F);
}

size_t code_point_width(uint32_t cp) { return is_combining(cp) ? 0 : is_wide(cp) ? 2 : 1; }

void append_escape(std::string& out, uint32_t cp, bool is_byte) {
  char buf[16];
  switch (cp) {
    case '\n': out += "\\n"; return;
    case '\t': out += "\\t"; return;
    case '\r': out += "\\r"; return;
    case 0x1B: out += "\\e"; return;
    default: break;
  }
  if (is_byte || cp < 0x80) std::snprintf(buf, sizeof buf, "\\x%02X", cp);
  else std::snprintf(buf, sizeof buf, "\\u{%X}", cp);
  out += buf;
}

std::string escape_markup(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

std::string backend_text(const v1::SandboxSummary& sandbox) {
  if (sandbox.backend() == v1::SANDBOX_NONE) return "NONE: runs WITHOUT the sandbox";
  std::string name = v1::SandboxBackend_Name(sandbox.backend());
  if (name.rfind("SANDBOX_", 0) == 0) name = name.substr(8);
  return name.empty() ? "unknown backend " + std::to_string(sandbox.backend()) : name;
}

std::string sandbox_text(const v1::SandboxSummary& sandbox) {
  if (sandbox.backend() == v1::SANDBOX_NONE) return backend_text(sandbox);  // no mode, roots or network of its own
  std::string out = backend_text(sandbox);
  if (!sandbox.mode().empty()) out += ", " + visible_text(sandbox.mode());
  const std::string network =
      sandbox.network_mode().empty() ? std::string(sandbox.network_access() ? "on" : "off") : sandbox.network_mode();
  out += ", network " + visible_text(network);
  if (network == "host") out += " (DANGEROUS: the host's network)";
  for (const auto& root : sandbox.writable_roots()) out += ", writable " + quote_word_on_one_line(root);
  return out;
}

std::string escalation_text(const v1::ApprovalRequest& r) {
  switch (r.reason().kind()) {
    case v1::ApprovalReason::ESCALATION: return "REQUESTED: approving runs it without the sandbox";
    case v1::ApprovalReason::SANDBOX_RETRY:
      return "retry WITHOUT the sandbox (attempt " + std::to_string(r.attempt()) + " after a sandbox denial)";
    default: return "not requested";
  }
}

std::string rule_text(const v1::RuleMatch& m) {
  std::string out = v1::Decision_Name(m.decision());
  if (m.heuristic()) {
    out += " by heuristic (no rule matched)";
  } else {
    out += " by rule " + quote_command_on_one_line(m.matched_prefix());
    if (!m.source().empty()) out += " at " + visible_text(m.source());
  }
  if (!m.justification().empty()) out += ": " + visible_text(m.justification());
  return out;
}

std::string nested_text(const v1::NestedExecRequest& n) {
  return "pid " + std::to_string(n.pid()) + " execs " + quote_word_on_one_line(n.path()) + " inside " +
         (n.session_id() != 0 ? "session " + std::to_string(n.session_id()) : std::string("a one-shot command")) +
         ", started as " + visible_text(n.parent_command()) + " (its sandbox stays as it is)";
}

std::string session_text(const v1::ApprovalRequest& r) {
  int32_t session = r.has_nested() ? r.nested().session_id() : r.has_network() ? r.network().session_id() : 0;
  std::string out = session != 0 ? std::to_string(session) : std::string("none yet (the command has not started)");
  if (!r.turn_id().empty()) out += ", turn " + visible_text(r.turn_id());
  if (!r.call_id().empty()) out += ", call " + visible_text(r.call_id());
  return out;
}

std::string waited_text(const v1::ApprovalRequest& r, int64_t now_ms) {
  std::string out = format_duration(now_ms - r.created_at_unix_ms());
  if (r.expires_at_unix_ms() > 0) out += " (times out in " + format_duration(r.expires_at_unix_ms() - now_ms) + ")";
  return out;
}

}  // namespace

std::string quote_word_on_one_line(std::string_view word) {
  const std::string quoted = shell_quote(word);
  std::string out;
  for (char c : quoted) {
    if (c == '\n') out += "'$'\\n''";  // inside shell_quote's single quotes: close, $'\n', reopen
    else out += c;
  }
  return out;
}

std::string visible_text(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t len = utf8_sequence_length(lead);
    const bool valid = (lead < 0x80 || len > 1) && i + len <= text.size() && is_valid_utf8(text.substr(i, len));
    if (!valid) {
      append_escape(out, lead, /*is_byte=*/true);
      ++i;
      continue;
    }
    size_t next = i;
    const uint32_t cp = next_code_point(text, next);
    if (cp == '\\') out += "\\\\";
    else if (cp == '\n' || is_deceptive_code_point(cp)) append_escape(out, cp, false);
    else out.append(text.substr(i, next - i));
    i = next;
  }
  return out;
}

size_t display_width(std::string_view text) {
  size_t width = 0;
  for (size_t i = 0; i < text.size();) width += code_point_width(next_code_point(text, i));
  return width;
}

std::string fit_to_width(std::string_view text, size_t width) {
  if (display_width(text) <= width) return std::string(text);
  if (width == 0) return "";
  std::string out;
  size_t used = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t start = i;
    const size_t w = code_point_width(next_code_point(text, i));
    if (used + w > width - 1) break;  // one column for the ellipsis
    out.append(text.substr(start, i - start));
    used += w;
  }
  return out + "…";
}

std::string pad_to_width(std::string_view text, size_t width) {
  std::string out = fit_to_width(text, width);
  out.append(width - std::min(width, display_width(out)), ' ');
  return out;
}

std::vector<std::string> wrap_to_width(std::string_view text, size_t width) {
  std::vector<std::string> lines;
  if (width == 0) return lines;
  std::string line;
  size_t used = 0, last_space = std::string::npos;
  for (size_t i = 0; i < text.size();) {
    const size_t start = i;
    const uint32_t cp = next_code_point(text, i);
    const size_t w = code_point_width(cp);
    if (used + w > width) {
      // Break after the last space when it leaves at least half a line, else right here.
      std::string rest;
      if (last_space != std::string::npos && last_space >= width / 2) {
        rest = line.substr(last_space + 1);
        line.resize(last_space + 1);
      }
      lines.push_back(line);
      line = rest;
      used = display_width(line);
      last_space = std::string::npos;
    }
    if (cp == ' ') last_space = line.size();
    line.append(text.substr(start, i - start));
    used += w;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

std::string format_duration(int64_t ms) {
  const int64_t s = ms < 0 ? 0 : ms / 1000;
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  else if (s < 86400) std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600), static_cast<long long>(s / 60 % 60));
  else std::snprintf(buf, sizeof buf, "%lldd%02lldh", static_cast<long long>(s / 86400), static_cast<long long>(s / 3600 % 24));
  return buf;
}

const char* approval_reason_text(v1::ApprovalReason::Kind kind) {
  switch (kind) {
    case v1::ApprovalReason::PROMPT_RULE: return "a prompt rule matched";
    case v1::ApprovalReason::HEURISTIC: return "the approval policy asks for this command";
    case v1::ApprovalReason::ESCALATION: return "the command asks to run WITHOUT the sandbox";
    case v1::ApprovalReason::SANDBOX_RETRY: return "it failed in the sandbox; retry WITHOUT the sandbox?";
    case v1::ApprovalReason::NETWORK: return "a sandboxed command wants to reach a host no rule allows";
    default: return "approval needed";
  }
}

std::string decision_text(v1::ReviewDecision decision) {
  switch (decision) {
    case v1::APPROVED: return "approved once";
    case v1::APPROVED_FOR_SESSION: return "approved for the session";
    case v1::APPROVED_EXECPOLICY_AMENDMENT: return "approved; its rule goes to policy.amend_file (if the daemon sets one)";
    case v1::DENIED: return "denied";
    case v1::ABORT: return "aborted (the agent's turn stops)";
    default: return "answered (" + v1::ReviewDecision_Name(decision) + ")";
  }
}

std::string resolution_text(const v1::ApprovalEvent::Resolved& resolved) {
  const std::string& source = resolved.resolution_source();
  if (source == "timeout") return "timed out";
  if (source == "requester_disconnected") return "withdrawn: the requester went away";
  if (source == "no_reviewer") return "rejected: no reviewer was watching";
  if (source == "shutdown") return "ended: codexd is shutting down";
  std::string out = decision_text(resolved.decision());
  if (resolved.has_resolved_by_uid()) out += " by uid " + std::to_string(resolved.resolved_by_uid());
  return out;
}

std::string rpc_error_text(const grpc::Status& status) {
  const std::string message = visible_text(status.error_message());
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE: return "cannot reach codexd: " + message;
    case grpc::StatusCode::FAILED_PRECONDITION: return "already answered: " + message;
    case grpc::StatusCode::NOT_FOUND: return "no longer pending: " + message;
    case grpc::StatusCode::PERMISSION_DENIED: return "you may not answer it: " + message;
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "codexd did not answer in time";
    case grpc::StatusCode::INVALID_ARGUMENT: return "codexd refused the answer: " + message;
    default: return "failed: " + message;
  }
}

bool can_remember(const v1::ApprovalRequest& request) {
  return !request.proposed_amendment().empty() || request.has_network();
}

std::string request_command_line(const v1::ApprovalRequest& r) {
  if (!r.has_network()) return quote_command_on_one_line(r.argv());
  const auto& n = r.network();
  return "connect to " + quote_word_on_one_line(n.host()) + ":" + std::to_string(n.port()) + " (" +
         visible_text(n.protocol()) + ") from " + visible_text(r.cmd());
}

std::string approval_row(const v1::ApprovalRequest& r, int64_t now_ms, size_t width) {
  const std::string fixed = pad_to_width(visible_text(r.approval_id()), 21) + " " +
                            pad_to_width(r.agent_id().empty() ? "-" : visible_text(r.agent_id()), 14) + " " +
                            pad_to_width(format_duration(now_ms - r.created_at_unix_ms()), 7) + " ";
  return pad_to_width(fixed + request_command_line(r), width);
}

std::vector<DetailEntry> approval_details(const v1::ApprovalRequest& r, int64_t now_ms, const std::string& user_name) {
  std::vector<DetailEntry> out;
  out.push_back({"approval", visible_text(r.approval_id())});
  out.push_back({"agent", (r.agent_id().empty() ? std::string("(no label)") : visible_text(r.agent_id())) + ", uid " +
                              std::to_string(r.requester_uid()) + (user_name.empty() ? "" : " (" + visible_text(user_name) + ")")});
  out.push_back({"session", session_text(r)});
  out.push_back({"cwd", quote_word_on_one_line(r.workdir())});
  out.push_back({r.has_network() ? "network" : "command", request_command_line(r)});
  if (r.has_nested()) out.push_back({"nested", nested_text(r.nested())});
  // reason.message repeats the command and the rule in Codex's words: not shown again.
  out.push_back({"why", approval_reason_text(r.reason().kind())});
  if (!r.reason().justification().empty()) out.push_back({"note", visible_text(r.reason().justification())});
  for (const auto& m : r.matched_rules()) out.push_back({"rule", rule_text(m)});
  if (r.matched_rules().empty()) out.push_back({"rule", "none matched"});
  out.push_back({"sandbox", sandbox_text(r.sandbox())});
  out.push_back({"escalation", escalation_text(r)});
  if (r.tty()) out.push_back({"tty", "runs on a pseudo-terminal"});
  std::string remember = "nothing to remember (no rule proposed)";
  if (r.has_network()) remember = "network_rule(host=" + quote_word_on_one_line(r.network().host()) + ", protocol=" +
                                  visible_text(r.network().protocol()) + ") -> allow";
  else if (!r.proposed_amendment().empty()) remember = "prefix_rule(" + quote_command_on_one_line(r.proposed_amendment()) + ") -> allow";
  out.push_back({"remember", remember});
  out.push_back({"waited", waited_text(r, now_ms)});
  return out;
}

std::string notification_body(const v1::ApprovalRequest& r) {
  const std::string agent = r.agent_id().empty() ? "(no label)" : visible_text(r.agent_id());
  return escape_markup(fit_to_width(agent + ": " + request_command_line(r), 200));
}

}  // namespace codexd::client
