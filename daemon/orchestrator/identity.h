// Who a command runs as. User mode: the daemon's own user. System mode: the caller's uid with
// its primary gid and supplementary groups (a root caller may be mapped to an unprivileged
// account), with HOME/USER/LOGNAME of that user. A caller never gets more privilege than it has.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "platform/posix/spawn.h"

namespace codexd::orchestrator {

struct RunAs {
  std::optional<posix::Credentials> credentials;  // absent: the daemon's own identity
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  std::string user;
  std::string home;
  std::string shell;
  std::map<std::string, std::string> forced_env;  // HOME, USER, LOGNAME (system mode)
};

// User mode: the daemon's identity. System mode: drop to `caller_uid` (or to `root_runs_as`
// for a root caller when set).
Result<RunAs> resolve_run_as(bool system_mode, uid_t caller_uid, const std::string& root_runs_as);

// `uid`'s home directory from the passwd database (not $HOME). NotFound without an entry.
Result<std::string> passwd_home(uid_t uid);

// Whether `uid`/`gid`/`groups` may enter (search) every component of `dir` and it is a
// directory; evaluated with the permission bits (root may enter anything).
Status check_directory_access(const std::string& dir, uid_t uid, gid_t gid, const std::vector<gid_t>& groups);

// Members of a group name (for reviewer groups); empty when unknown.
std::optional<gid_t> group_id(const std::string& name);
bool uid_in_group(uid_t uid, gid_t gid);

}  // namespace codexd::orchestrator
