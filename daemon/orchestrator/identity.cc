#include "daemon/orchestrator/identity.h"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace codexd::orchestrator {
namespace {

struct PasswdEntry {
  uid_t uid;
  gid_t gid;
  std::string name, home, shell;
};

Result<PasswdEntry> lookup_uid(uid_t uid) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  int rc = ::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found);
  if (rc != 0) return ErrnoStatus("getpwuid_r", rc);
  if (!found) return NotFound("uid " + std::to_string(uid) + " has no passwd entry");
  return PasswdEntry{pw.pw_uid, pw.pw_gid, pw.pw_name, pw.pw_dir ? pw.pw_dir : "/", pw.pw_shell ? pw.pw_shell : "/bin/sh"};
}

Result<PasswdEntry> lookup_name(const std::string& name) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  int rc = ::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found);
  if (rc != 0) return ErrnoStatus("getpwnam_r", rc);
  if (!found) return NotFound("no user named " + name);
  return PasswdEntry{pw.pw_uid, pw.pw_gid, pw.pw_name, pw.pw_dir ? pw.pw_dir : "/", pw.pw_shell ? pw.pw_shell : "/bin/sh"};
}

std::vector<gid_t> supplementary_groups(const std::string& user, gid_t primary) {
  int n = 64;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  while (::getgrouplist(user.c_str(), primary, groups.data(), &n) < 0) groups.resize(static_cast<size_t>(n));
  groups.resize(static_cast<size_t>(n));
  return groups;
}

}  // namespace

Result<std::string> passwd_home(uid_t uid) {
  CODEXD_ASSIGN_OR_RETURN(PasswdEntry entry, lookup_uid(uid));
  return entry.home;
}

Result<RunAs> resolve_run_as(bool system_mode, uid_t caller_uid, const std::string& root_runs_as) {
  RunAs run;
  if (!system_mode) {
    run.uid = ::geteuid();
    run.gid = ::getegid();
    auto me = lookup_uid(run.uid);
    if (me.ok()) {
      run.user = me->name;
      run.home = me->home;
      run.shell = me->shell;
    }
    const char* home = std::getenv("HOME");
    if (home && *home) run.home = home;
    return run;
  }
  Result<PasswdEntry> entry = (caller_uid == 0 && !root_runs_as.empty()) ? lookup_name(root_runs_as) : lookup_uid(caller_uid);
  if (!entry.ok()) {
    return PermissionDenied("cannot run commands for uid " + std::to_string(caller_uid) + ": " + entry.status().message());
  }
  run.uid = entry->uid;
  run.gid = entry->gid;
  run.groups = supplementary_groups(entry->name, entry->gid);
  run.user = entry->name;
  run.home = entry->home;
  run.shell = entry->shell;
  run.credentials = posix::Credentials{run.uid, run.gid, run.groups};
  run.forced_env = {{"HOME", run.home}, {"USER", run.user}, {"LOGNAME", run.user}};
  return run;
}

Status check_directory_access(const std::string& dir, uid_t uid, gid_t gid, const std::vector<gid_t>& groups) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return ErrnoStatus("workdir " + dir, errno);
  if (!S_ISDIR(st.st_mode)) return InvalidArgument("workdir " + dir + " is not a directory");
  if (uid == 0) return Status::Ok();
  // Every ancestor must be searchable by this identity.
  std::string path;
  size_t pos = 0;
  while (pos != std::string::npos) {
    size_t next = dir.find('/', pos + 1);
    path = dir.substr(0, next == std::string::npos ? dir.size() : next);
    if (path.empty()) path = "/";
    if (::stat(path.c_str(), &st) != 0) return ErrnoStatus("workdir " + dir, errno);
    mode_t bit;
    if (st.st_uid == uid) bit = S_IXUSR;
    else if (st.st_gid == gid || std::find(groups.begin(), groups.end(), st.st_gid) != groups.end()) bit = S_IXGRP;
    else bit = S_IXOTH;
    if (!(st.st_mode & bit)) {
      return PermissionDenied("workdir " + dir + " is not accessible to uid " + std::to_string(uid) + " (" + path + ")");
    }
    pos = next;
  }
  return Status::Ok();
}

std::optional<gid_t> group_id(const std::string& name) {
  std::vector<char> buf(16384);
  group gr{};
  group* found = nullptr;
  if (::getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &found) != 0 || !found) return std::nullopt;
  return found->gr_gid;
}

bool uid_in_group(uid_t uid, gid_t gid) {
  auto entry = lookup_uid(uid);
  if (!entry.ok()) return false;
  if (entry->gid == gid) return true;
  auto groups = supplementary_groups(entry->name, entry->gid);
  return std::find(groups.begin(), groups.end(), gid) != groups.end();
}

}  // namespace codexd::orchestrator
