#include "daemon/exec/session_record.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "base/unique_fd.h"

namespace codexd::exec {
namespace {

using nlohmann::json;

Status write_all_fd(int fd, const std::string& text) {
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write", errno);
    }
    off += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Status write_session_record(const std::string& dir, const SessionRecord& record) {
  const SessionMetadata& m = record.metadata;
  json j;
  j["version"] = kSessionRecordVersion;
  j["id"] = m.id;
  j["owner_uid"] = m.owner_uid;
  j["agent_id"] = m.agent_id;
  j["call_id"] = m.call_id;
  j["argv"] = m.argv;
  j["cwd"] = m.cwd;
  j["tty"] = m.tty;
  j["rows"] = record.rows;
  j["cols"] = record.cols;
  if (!record.group_place.empty()) j["group"] = record.group_place;
  if (record.memory_max) j["memory_max"] = *record.memory_max;
  if (record.pids_max) j["pids_max"] = *record.pids_max;
  j["sandbox"] = static_cast<int>(m.sandbox);
  j["network"] = static_cast<int>(m.network);
  j["started_at_ms"] =
      std::chrono::duration_cast<std::chrono::milliseconds>(m.started_at.time_since_epoch()).count();
  const std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  const std::string path = dir + "/" + kSessionRecordName;
  const std::string temp = path + ".new";
  {
    UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return ErrnoStatus("session record " + temp, errno);
    // Named: a full disk under the state directory must say where (it was a bare "write: No
    // space left on device" in the ExecCommand error).
    if (Status written = write_all_fd(fd.get(), text); !written.ok()) return written.with_context("session record " + temp);
  }
  // Renamed into place so that a daemon killed mid-write leaves no half record. Not fsync'd: the
  // record describes processes, which a machine crash ends anyway, and the page cache outlives
  // any crash of the daemon (it cost two synchronous disk writes on every ExecCommand).
  if (::rename(temp.c_str(), path.c_str()) != 0) return ErrnoStatus("rename " + temp, errno);
  return Status::Ok();
}

Result<SessionRecord> read_session_record(const std::string& dir) {
  const std::string path = dir + "/" + kSessionRecordName;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return ErrnoStatus("session record " + path, errno);
  std::string text;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("read " + path, errno);
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > 16 * 1024 * 1024) return InvalidArgument(path + ": larger than 16 MiB");
  }
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument(path + ": not a JSON object (truncated or corrupt)");
  try {
    const int version = j.at("version").get<int>();
    if (version != kSessionRecordVersion) {
      return InvalidArgument(path + ": record version " + std::to_string(version) + ", this daemon reads " +
                             std::to_string(kSessionRecordVersion));
    }
    SessionRecord r;
    SessionMetadata& m = r.metadata;
    m.id = j.at("id").get<int>();
    m.owner_uid = j.at("owner_uid").get<uid_t>();
    m.agent_id = j.at("agent_id").get<std::string>();
    m.call_id = j.at("call_id").get<std::string>();
    m.argv = j.at("argv").get<std::vector<std::string>>();
    m.cwd = j.at("cwd").get<std::string>();
    m.tty = j.at("tty").get<bool>();
    r.rows = j.at("rows").get<unsigned short>();
    r.cols = j.at("cols").get<unsigned short>();
    if (j.contains("group")) r.group_place = j.at("group").get<std::string>();
    if (j.contains("memory_max")) r.memory_max = j.at("memory_max").get<uint64_t>();
    if (j.contains("pids_max")) r.pids_max = j.at("pids_max").get<uint64_t>();
    // The daemon's own enum numbers; a number out of range is a corrupt record, never an
    // enum value that names nothing.
    const int backend = j.at("sandbox").get<int>();
    const int network = j.at("network").get<int>();
    if (backend < 0 || backend > static_cast<int>(sandbox::Backend::kWindowsRestrictedToken)) {
      return InvalidArgument(path + ": sandbox " + std::to_string(backend) + " is not a sandbox backend");
    }
    if (network < 0 || network > static_cast<int>(sandbox::NetworkMode::kHost)) {
      return InvalidArgument(path + ": network " + std::to_string(network) + " is not a network mode");
    }
    m.sandbox = static_cast<sandbox::Backend>(backend);
    m.network = static_cast<sandbox::NetworkMode>(network);
    m.started_at = std::chrono::system_clock::time_point(std::chrono::milliseconds(j.at("started_at_ms").get<int64_t>()));
    return r;
  } catch (const std::exception& e) {
    return InvalidArgument(path + ": " + e.what());
  }
}

}  // namespace codexd::exec
