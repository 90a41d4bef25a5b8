#include "client/review_prompt.h"

#include <poll.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>

#include "base/shell_quote.h"
#include "client/approvals_format.h"

namespace codexd::client {
namespace {

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

}  // namespace

std::string describe_approval(const v1::ApprovalRequest& r) {
  std::string out;
  out += "approval " + r.approval_id() + " (uid " + std::to_string(r.requester_uid());
  if (!r.agent_id().empty()) out += ", agent " + r.agent_id();
  out += ")\n";
  if (r.has_network()) {
    const auto& n = r.network();
    // The host comes from the sandboxed command: quoted like any word it chose.
    out += "  network: " + shell_quote(n.host()) + " port " + std::to_string(n.port()) + " (" + n.protocol() + ")";
    if (n.session_id() != 0) out += ", session " + std::to_string(n.session_id());
    out += "\n  from:    " + r.cmd() + "\n";  // the daemon's shell_join: quoted, terminal-safe
    out += "  remember: network_rule(host=" + shell_quote(n.host()) + ", protocol=" + n.protocol() + ") -> allow\n";
  } else {
    // Always the argv, quoted: a raw script string could hold terminal escapes or look like
    // another command.
    out += "  command: " + shell_join_range(r.argv()) + "\n";
  }
  if (r.has_nested()) {
    const auto& n = r.nested();
    out += "  nested:  pid " + std::to_string(n.pid()) + " execs " + shell_quote(n.path()) + " inside " +
           (n.session_id() != 0 ? "session " + std::to_string(n.session_id()) : std::string("a one-shot command")) + ", started as " +
           n.parent_command() + " (its sandbox stays as it is)\n";
  }
  out += "  in:      " + r.workdir() + "\n";
  out += "  why:     " + std::string(approval_reason_text(r.reason().kind()));
  if (!r.reason().message().empty()) out += " (" + r.reason().message() + ")";
  out += "\n";
  if (!r.reason().justification().empty()) out += "  note:    " + r.reason().justification() + "\n";
  for (const auto& m : r.matched_rules()) {
    out += "  rule:    " + shell_join_range(m.matched_prefix()) + " -> " + v1::Decision_Name(m.decision());
    if (m.heuristic()) out += " (heuristic)";
    if (!m.justification().empty()) out += ": " + m.justification();
    out += "\n";
  }
  if (!r.proposed_amendment().empty()) out += "  remember: prefix_rule(" + shell_join_range(r.proposed_amendment()) + ") -> allow\n";
  const auto& sb = r.sandbox();
  out += "  sandbox: " + std::string(sb.backend() == v1::SANDBOX_NONE ? "NONE" : v1::SandboxBackend_Name(sb.backend()));
  if (!sb.mode().empty()) out += " " + sb.mode();
  for (const auto& root : sb.writable_roots()) out += " +w:" + root;
  out += " network:" + (sb.network_mode().empty() ? std::string(sb.network_access() ? "on" : "off") : sb.network_mode());
  if (sb.network_mode() == "host") out += " (DANGEROUS: host network)";
  out += "\n";
  return out;
}

std::optional<v1::ReviewDecision> ask_on_terminal(const v1::ApprovalRequest& request, int tty_fd, int wake_fd) {
  std::string choices = "approve? [y]es once / [s]ession / ";
  const bool remember_offered = can_remember(request);
  if (remember_offered) choices += "[r]emember as a rule / ";
  choices += "[n]o / [a]bort / Enter skips: ";
  write_all(tty_fd, "\r\n" + describe_approval(request) + choices);
  std::string line;
  for (;;) {
    pollfd fds[2] = {{tty_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
    if (::poll(fds, wake_fd >= 0 ? 2 : 1, -1) < 0) return std::nullopt;
    if (wake_fd >= 0 && (fds[1].revents & POLLIN)) {
      write_all(tty_fd, "\r\n(answered elsewhere)\r\n");
      return std::nullopt;
    }
    char c;
    ssize_t n = ::read(tty_fd, &c, 1);
    if (n <= 0) return std::nullopt;
    if (c == '\r' || c == '\n') break;
    line.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    if (line.size() > 64) line.clear();
  }
  if (line == "y" || line == "yes") return v1::APPROVED;
  if (line == "s" || line == "session") return v1::APPROVED_FOR_SESSION;
  if ((line == "r" || line == "remember") && remember_offered) return v1::APPROVED_EXECPOLICY_AMENDMENT;
  if (line == "n" || line == "no") return v1::DENIED;
  if (line == "a" || line == "abort") return v1::ABORT;
  return std::nullopt;
}

void send_terminal_answer(v1::Approvals::Stub& stub, const ClientOptions& options, const std::string& approval_id,
                          v1::ReviewDecision decision) {
  grpc::ClientContext context;
  prepare(context, options);
  v1::ResolveApprovalRequest resolve;
  resolve.set_approval_id(approval_id);
  resolve.set_decision(decision);
  v1::ResolveApprovalResponse response;
  auto status = stub.ResolveApproval(&context, resolve, &response);
  if (!status.ok()) std::fprintf(stderr, "codexctl: %s\n", status.error_message().c_str());
}

}  // namespace codexd::client
