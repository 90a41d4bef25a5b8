#include "daemon/exec/shim_protocol.h"

#include <cstring>
#include <nlohmann/json.hpp>

namespace codexd::exec::shim {
namespace {

using nlohmann::json;

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint64_t get_u64(std::string_view in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[static_cast<size_t>(i)])) << (8 * i);
  return v;
}

Status too_short(std::string_view what) { return InvalidArgument("shim message " + std::string(what) + " is too short"); }

// nlohmann::json throws on type errors; the parse is wrapped so that nothing escapes.
template <typename T>
T get_or(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return it->get<T>();
}

}  // namespace

std::string encode(Type type, std::string_view payload) {
  std::string out;
  out.reserve(1 + payload.size());
  out.push_back(static_cast<char>(type));
  out.append(payload);
  return out;
}

std::string encode_offset_data(Type type, uint64_t offset, std::string_view data) {
  std::string out;
  out.reserve(9 + data.size());
  out.push_back(static_cast<char>(type));
  put_u64(out, offset);
  out.append(data);
  return out;
}

std::string encode_u64(Type type, uint64_t value) {
  std::string out(1, static_cast<char>(type));
  put_u64(out, value);
  return out;
}

std::string encode_resize(unsigned short rows, unsigned short cols) {
  std::string out(1, static_cast<char>(Type::kResize));
  put_u64(out, (static_cast<uint64_t>(rows) << 16) | cols);
  return out;
}

std::string encode_exit(const ExitStatus& status) {
  std::string out(1, static_cast<char>(Type::kExited));
  put_u64(out, static_cast<uint64_t>(static_cast<int64_t>(status.exit_code)));
  put_u64(out, static_cast<uint64_t>(static_cast<int64_t>(status.signal.value_or(0))));
  out.push_back(status.core_dumped ? 1 : 0);
  return out;
}

std::string encode_pid(pid_t pid) { return encode_u64(Type::kSpawned, static_cast<uint64_t>(pid)); }

Result<std::pair<uint64_t, std::string_view>> decode_offset_data(std::string_view payload) {
  if (payload.size() < 8) return too_short("output");
  return std::pair<uint64_t, std::string_view>(get_u64(payload), payload.substr(8));
}

Result<uint64_t> decode_u64(std::string_view payload) {
  if (payload.size() < 8) return too_short("offset");
  return get_u64(payload);
}

Result<std::pair<unsigned short, unsigned short>> decode_resize(std::string_view payload) {
  if (payload.size() < 8) return too_short("resize");
  uint64_t v = get_u64(payload);
  return std::pair<unsigned short, unsigned short>(static_cast<unsigned short>((v >> 16) & 0xFFFF),
                                                   static_cast<unsigned short>(v & 0xFFFF));
}

Result<ExitStatus> decode_exit(std::string_view payload) {
  if (payload.size() < 17) return too_short("exit");
  ExitStatus status;
  status.exit_code = static_cast<int>(static_cast<int64_t>(get_u64(payload)));
  int signal = static_cast<int>(static_cast<int64_t>(get_u64(payload.substr(8))));
  if (signal != 0) status.signal = signal;
  status.core_dumped = payload[16] != 0;
  return status;
}

Result<pid_t> decode_pid(std::string_view payload) {
  CODEXD_ASSIGN_OR_RETURN(uint64_t v, decode_u64(payload));
  if (v == 0 || v > 0x7FFFFFFF) return InvalidArgument("shim reported a bad pid");
  return static_cast<pid_t>(v);
}

std::string spawn_request_json(const posix::SpawnRequest& r, size_t attach_window_bytes, bool sandboxed, bool relays_proxy,
                               std::string_view session_dir, size_t shim_join_fd_count) {
  json j;
  j["executable"] = r.executable;
  j["argv"] = r.argv;
  j["env"] = r.env;
  j["cwd"] = r.cwd;
  j["stdio"] = static_cast<int>(r.stdio);
  j["stdin_pipe"] = r.stdin_pipe;
  j["rows"] = r.rows;
  j["cols"] = r.cols;
  if (r.credentials) {
    j["uid"] = r.credentials->uid;
    j["gid"] = r.credentials->gid;
    j["groups"] = r.credentials->groups;
  }
  j["parent_death_signal"] = r.parent_death_signal;
  j["ignore_forwarded_signals"] = r.ignore_forwarded_signals;
  j["has_pass_fd"] = r.pass_fd >= 0;
  if (r.program_fd >= 0) j["has_program_fd"] = true;
  if (r.console_socket) j["console_socket"] = true;
  j["join_fds"] = r.join_fds.size();
  json limits = json::array();
  for (const auto& l : r.rlimits) limits.push_back({l.resource, l.soft, l.hard});
  j["rlimits"] = limits;
  if (r.oom_score_adj) j["oom_score_adj"] = *r.oom_score_adj;
  j["attach_window_bytes"] = attach_window_bytes;
  if (relays_proxy) j["proxy_relay"] = true;
  j["sandboxed"] = sandboxed;
  if (!session_dir.empty()) j["session_dir"] = std::string(session_dir);
  if (shim_join_fd_count > 0) j["shim_join_fds"] = shim_join_fd_count;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<DecodedSpawn> parse_spawn_request(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument("spawn request is not a JSON object");
  try {
    DecodedSpawn out;
    auto& r = out.request;
    r.executable = j.at("executable").get<std::string>();
    r.argv = j.at("argv").get<std::vector<std::string>>();
    r.env = j.at("env").get<std::vector<std::string>>();
    r.cwd = j.at("cwd").get<std::string>();
    int stdio = j.at("stdio").get<int>();
    if (stdio < 0 || stdio > static_cast<int>(posix::StdioMode::kPty)) return InvalidArgument("bad stdio mode");
    r.stdio = static_cast<posix::StdioMode>(stdio);
    r.stdin_pipe = get_or(j, "stdin_pipe", false);
    r.rows = get_or<unsigned short>(j, "rows", 24);
    r.cols = get_or<unsigned short>(j, "cols", 80);
    if (j.contains("uid")) {
      r.credentials = posix::Credentials{j.at("uid").get<uid_t>(), j.at("gid").get<gid_t>(),
                                         j.at("groups").get<std::vector<gid_t>>()};
    }
    r.parent_death_signal = get_or(j, "parent_death_signal", 0);
    r.ignore_forwarded_signals = get_or(j, "ignore_forwarded_signals", false);
    r.console_socket = get_or(j, "console_socket", false);
    for (const auto& l : j.at("rlimits")) {
      r.rlimits.push_back({l.at(0).get<int>(), l.at(1).get<uint64_t>(), l.at(2).get<uint64_t>()});
    }
    if (j.contains("oom_score_adj")) r.oom_score_adj = j.at("oom_score_adj").get<int>();
    out.has_pass_fd = get_or(j, "has_pass_fd", false);
    out.has_program_fd = get_or(j, "has_program_fd", false);
    out.join_fd_count = get_or<size_t>(j, "join_fds", 0);
    out.relays_proxy = get_or(j, "proxy_relay", false);
    out.attach_window_bytes = get_or<size_t>(j, "attach_window_bytes", 1024 * 1024);
    out.sandboxed = get_or(j, "sandboxed", false);
    out.session_dir = get_or<std::string>(j, "session_dir", "");
    out.shim_join_fd_count = get_or<size_t>(j, "shim_join_fds", 0);
    if (r.argv.empty() || r.executable.empty()) return InvalidArgument("spawn request without a command");
    return out;
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("bad spawn request: ") + e.what());
  }
}

std::string state_json(const ShimState& s) {
  json j;
  j["protocol"] = s.protocol;
  j["pid"] = s.pid;
  j["begin_offset"] = s.begin_offset;
  j["end_offset"] = s.end_offset;
  j["delivered_offset"] = s.delivered_offset;
  j["output_closed"] = s.output_closed;
  j["input_open"] = s.input_open;
  j["reaped"] = s.reaped;
  if (s.rows > 0 && s.cols > 0) {
    j["rows"] = s.rows;
    j["cols"] = s.cols;
  }
  if (s.exit) {
    j["exit_code"] = s.exit->exit_code;
    j["signal"] = s.exit->signal.value_or(0);
    j["core_dumped"] = s.exit->core_dumped;
  }
  return j.dump();
}

Result<ShimState> parse_state(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument("shim state is not a JSON object");
  try {
    ShimState s;
    s.protocol = j.at("protocol").get<int>();
    s.pid = j.at("pid").get<pid_t>();
    s.begin_offset = j.at("begin_offset").get<uint64_t>();
    s.end_offset = j.at("end_offset").get<uint64_t>();
    s.delivered_offset = get_or<uint64_t>(j, "delivered_offset", 0);
    s.output_closed = get_or(j, "output_closed", false);
    s.input_open = get_or(j, "input_open", false);
    s.reaped = get_or(j, "reaped", false);
    s.rows = get_or<unsigned short>(j, "rows", 0);
    s.cols = get_or<unsigned short>(j, "cols", 0);
    if (j.contains("exit_code")) {
      ExitStatus e;
      e.exit_code = j.at("exit_code").get<int>();
      int sig = get_or(j, "signal", 0);
      if (sig != 0) e.signal = sig;
      e.core_dumped = get_or(j, "core_dumped", false);
      s.exit = e;
    }
    if (s.begin_offset > s.end_offset) return InvalidArgument("shim state: begin after end");
    return s;
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("bad shim state: ") + e.what());
  }
}

}  // namespace codexd::exec::shim
