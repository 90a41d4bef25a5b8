// codexctl sessions / attach / write / poll / kill.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <google/protobuf/util/json_util.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "client/commands.h"
#include "base/shell_quote.h"
#include "client/session_stream.h"
#include "codexd/v1/exec.grpc.pb.h"

namespace codexd::client {
namespace {

std::string age(int64_t unix_ms) {
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  int64_t s = std::max<int64_t>(0, (now - unix_ms) / 1000);
  char buf[32];
  if (s < 120) std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  else if (s < 7200) std::snprintf(buf, sizeof buf, "%lldm", static_cast<long long>(s / 60));
  else std::snprintf(buf, sizeof buf, "%lldh", static_cast<long long>(s / 3600));
  return buf;
}

// What `write` and `poll` print: the RPC error, the JSON, or the output and the exit code.
int print_exec_result(const ClientOptions& options, const grpc::Status& status, const v1::ExecResult& result) {
  if (!status.ok()) return report_rpc_error(status, options);
  if (options.json) {
    print_json(result);
    return 0;
  }
  std::fwrite(result.output().data(), 1, result.output().size(), stdout);
  std::fflush(stdout);
  if (result.has_exit_code()) std::fprintf(stderr, "codexctl: process exited with code %d\n", result.exit_code());
  return 0;
}

}  // namespace

std::string format_size(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "K", "M", "G", "T"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f%s" : "%.1f%s", value, kUnits[unit]);
  return buf;
}

UsageColumns usage_columns(const v1::ResourceUsage& usage) {
  if (!usage.measured()) return {"-", "-", "-"};
  char cpu[32];
  std::snprintf(cpu, sizeof cpu, "%.2fs", static_cast<double>(usage.cpu_user_usec() + usage.cpu_system_usec()) / 1e6);
  return {format_size(usage.peak_memory_bytes()), cpu, std::to_string(usage.peak_processes())};
}

// Protobuf's JSON mapping gives bytes fields as base64 (kept: it is lossless and the API's
// own form). Each non-empty one also comes as <name>_text, the bytes read as UTF-8 (invalid
// sequences as U+FFFD), so `codexctl --json sandbox -- CMD | jq -r .stdout_text` just works.
std::string to_json(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  const google::protobuf::Descriptor* descriptor = message.GetDescriptor();
  const google::protobuf::Reflection* reflection = message.GetReflection();
  nlohmann::ordered_json json;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(i);
    if (field->type() != google::protobuf::FieldDescriptor::TYPE_BYTES || field->is_repeated()) continue;
    const std::string bytes = reflection->GetString(message, field);
    if (bytes.empty()) continue;
    if (json.is_null()) json = nlohmann::ordered_json::parse(out, nullptr, false);
    if (json.is_discarded()) return out;
    json[field->name() + "_text"] = bytes;
  }
  if (json.is_null()) return out;
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void print_json(const google::protobuf::Message& message) { std::printf("%s\n", to_json(message).c_str()); }

std::string unescape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    char c = text[++i];
    switch (c) {
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'e': out += '\x1b'; break;
      case '\\': out += '\\'; break;
      case 'x':
        if (i + 2 < text.size() + 0 && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
          out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
          i += 2;
        } else {
          out += "\\x";
        }
        break;
      default: out += '\\'; out += c;
    }
  }
  return out;
}

namespace {

constexpr size_t kAgentWidth = 16;
constexpr size_t kCommandWidth = 48;

// At most `width` characters (UTF-8 code points), the last one an ellipsis when cut.
std::string ellipsized(const std::string& text, size_t width) {
  size_t chars = 0, cut = text.size();
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // a continuation byte
    if (chars == width - 1) cut = i;
    if (++chars > width) return text.substr(0, cut) + "\u2026";
  }
  return text;
}

size_t display_width(const std::string& text) {
  size_t chars = 0;
  for (unsigned char c : text) chars += (c & 0xC0) != 0x80;
  return chars;
}

// Columns as wide as their widest cell (docker's way), so no state, agent or id breaks the
// alignment; `right` columns are amounts (memory, CPU time, processes).
void print_table(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right) {
  std::vector<size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], display_width(row[c]));
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string padding(widths[c] - display_width(row[c]), ' ');
      const bool last = c + 1 == row.size();
      line += right[c] ? padding + row[c] : row[c] + (last ? "" : padding);
      if (!last) line += "  ";
    }
    std::printf("%s\n", line.c_str());
  }
}

}  // namespace

int run_sessions(const ClientOptions& options, bool all_users, bool no_trunc) {
  v1::ListSessionsRequest request;
  request.set_all_users(all_users);
  v1::ListSessionsResponse response;
  auto status = call_unary<v1::Exec>(options, &v1::Exec::Stub::ListSessions, request, &response);
  if (!status.ok()) return report_rpc_error(status, options);
  if (options.json) {
    print_json(response);
    return 0;
  }
  std::vector<std::vector<std::string>> rows = {
      {"ID", "PID", "STATE", "UID", "AGENT", "AGE", "NET", "PEAK-MEM", "CPU", "PIDS", "COMMAND"}};
  for (const auto& s : response.sessions()) {
    std::string state = s.running() ? (s.tty() ? "running*" : "running") : "exited(" + std::to_string(s.exit_code()) + ")";
    const UsageColumns u = usage_columns(s.usage());
    const std::string agent = s.agent_id().empty() ? "-" : s.agent_id();
    const std::string command = shell_join_range(s.argv());
    rows.push_back({std::to_string(s.session_id()), std::to_string(s.pid()), state, std::to_string(s.owner_uid()),
                    no_trunc ? agent : ellipsized(agent, kAgentWidth), age(s.started_at_unix_ms()), s.network_mode(),
                    u.memory, u.cpu, u.processes, no_trunc ? command : ellipsized(command, kCommandWidth)});
  }
  print_table(rows, {false, false, false, false, false, false, false, true, true, true, false});  // amounts right
  return 0;
}

int run_attach(const ClientOptions& options, int session_id, std::optional<uint64_t> from_offset, bool lossy) {
  block_follow_signals();
  auto channel = connect(options);
  // Is it a TTY session? Then forward stdin and window size too.
  v1::ListSessionsResponse sessions;
  auto status = call_unary<v1::Exec>(options, channel, &v1::Exec::Stub::ListSessions, v1::ListSessionsRequest(), &sessions);
  if (!status.ok()) return report_rpc_error(status, options);
  bool tty = false;
  for (const auto& s : sessions.sessions()) {
    if (s.session_id() == session_id) tty = s.tty();
  }
  return follow_session(options, channel, session_id, from_offset, tty, false, !lossy);
}

int run_write(const ClientOptions& options, int session_id, const std::string& text, bool escapes,
              std::optional<uint32_t> yield_ms) {
  v1::WriteStdinRequest request;
  request.set_session_id(session_id);
  request.set_chars(escapes ? unescape(text) : text);
  if (yield_ms) request.set_yield_time_ms(*yield_ms);
  v1::ExecResult result;
  grpc::Status status = call_unary<v1::Exec>(options, &v1::Exec::Stub::WriteStdin, request, &result);
  if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
      status.error_message().find("stdin is closed") != std::string::npos) {
    // The daemon's words are for a model (Codex's tool); a person gets codexctl's.
    std::fprintf(stderr,
                 "codexctl: session %d has no stdin: it was started without --tty (stdin closed); "
                 "start it with `codexctl exec --tty` to write to it\n",
                 session_id);
    return kExitRpcError;
  }
  return print_exec_result(options, status, result);
}

int run_poll(const ClientOptions& options, int session_id, uint32_t yield_ms, std::optional<uint64_t> from_offset) {
  v1::PollRequest request;
  request.set_session_id(session_id);
  request.set_yield_time_ms(yield_ms);
  if (from_offset) request.set_from_offset(*from_offset);
  v1::ExecResult result;
  auto status = call_unary<v1::Exec>(options, &v1::Exec::Stub::Poll, request, &result);
  if (status.ok() && from_offset && !options.json) {
    // A re-read: say what is missing and where to continue (the next --from-offset).
    if (result.lost_bytes() > 0) {
      std::fprintf(stderr, "codexctl: %llu bytes from offset %llu are no longer retained\n",
                   static_cast<unsigned long long>(result.lost_bytes()), static_cast<unsigned long long>(*from_offset));
    }
  }
  int rc = print_exec_result(options, status, result);
  if (status.ok() && from_offset && !options.json) {
    std::fprintf(stderr, "codexctl: next offset %llu\n", static_cast<unsigned long long>(result.output_offset()));
  }
  return rc;
}

int run_kill(const ClientOptions& options, int session_id, const std::string& signal, std::optional<uint32_t> grace_ms) {
  v1::CancelRequest request;
  request.set_session_id(session_id);
  if (signal == "int") request.set_mode(v1::CancelRequest::INTERRUPT);
  else if (signal == "kill") request.set_mode(v1::CancelRequest::KILL);
  else request.set_mode(v1::CancelRequest::TERMINATE);
  if (grace_ms) request.set_grace_ms(*grace_ms);
  v1::CancelResponse response;
  auto status = call_unary<v1::Exec>(options, &v1::Exec::Stub::Cancel, request, &response);
  if (!status.ok()) return report_rpc_error(status, options);
  if (options.json) print_json(response);
  else if (!response.was_running()) std::fprintf(stderr, "codexctl: session %d had already exited\n", session_id);
  return 0;
}

}  // namespace codexd::client
