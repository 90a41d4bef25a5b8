// A durable session's record: what a restarted daemon needs to list and own the session
// again (id, owner, agent, command, terminal), written by the daemon next to the shim's
// socket in <state_dir>/sessions/<id>/session.json. Versioned; written atomically.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "daemon/exec/session.h"

namespace codexd::exec {

inline constexpr int kSessionRecordVersion = 1;
inline constexpr const char* kSessionRecordName = "session.json";

struct SessionRecord {
  SessionMetadata metadata;
  unsigned short rows = 24;
  unsigned short cols = 80;
  // The session's resource group (ResourceGroup::place(), "" without one) and the limits
  // the notes name, so that the next daemon takes the group over.
  std::string group_place;
  std::optional<uint64_t> memory_max;
  std::optional<uint64_t> pids_max;
};

// Writes <dir>/session.json (temp file, fsync, rename, fsync of the directory), mode 0600.
Status write_session_record(const std::string& dir, const SessionRecord& record);
// Reads it back. InvalidArgument naming what is wrong (truncated, not JSON, another version).
Result<SessionRecord> read_session_record(const std::string& dir);

}  // namespace codexd::exec
