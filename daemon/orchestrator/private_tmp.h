// The private, persistent /tmp of each agent (agent id + uid): <base>/<uid>/<agent hash>,
// owned by that uid, mode 0700, below directories only codexd's own user can change
// (docs/sandbox.md "Private /tmp"). The sandbox shows it at /tmp (bwrap) or names it in
// $TMPDIR and as a writable root (Landlock). While a command holds a lease on it, it stays;
// once the last lease is gone and `grace_ms` has passed without a new one, it is removed.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace codexd::orchestrator {

struct PrivateTmpOptions {
  std::string base;         // absolute; system mode: root-owned (posix::check_root_owned)
  bool system_mode = false; // system: base and <uid> owned by root; user: by the daemon's uid
  uint32_t grace_ms = 3'600'000;
};

// The default base: system mode /var/lib/codexd/tmp; user mode $XDG_STATE_HOME/codexd/tmp
// (else ~/.local/state/codexd/tmp, ~ being the daemon user's home from the passwd database).
std::string default_private_tmp_base(bool system_mode);

// One agent's directory as status shows it.
struct PrivateTmpEntry {
  uid_t uid = 0;
  std::string agent_id;  // "" also for a directory left by an earlier daemon (agent unknown)
  std::string path;
  size_t commands = 0;   // live leases
  // Milliseconds until it is removed; nullopt while commands hold it.
  std::optional<int64_t> removal_in_ms;
};

class PrivateTmpStore : public std::enable_shared_from_this<PrivateTmpStore> {
 public:
  // Removals run on `blocking` (a big tree must not stall the core thread); timers on `io`.
  PrivateTmpStore(boost::asio::io_context& io, boost::asio::thread_pool& blocking, PrivateTmpOptions options);

  // Where (uid, agent)'s directory lives below `base`. Pure: nothing is created.
  static std::string path_in(const std::string& base, uid_t uid, const std::string& agent_id);

  // Creates or checks the directory (and its parents) without following any symlink and
  // returns its path. PermissionDenied when something there is a symlink, has the wrong owner
  // or is writable by others; nothing is followed or changed then.
  Result<std::string> prepare(uid_t uid, gid_t gid, const std::string& agent_id);

  // While the returned lease lives (a command's launch holds it) the directory is not removed.
  // `path` is a path prepare() returned.
  std::shared_ptr<const void> lease(const std::string& path);

  // Directories left from before this start are adopted as idle (removed after the grace).
  void adopt_leftovers();

  // The caller's directories (every uid's with `all_users`).
  std::vector<PrivateTmpEntry> list(uid_t uid, bool all_users) const;

  const PrivateTmpOptions& options() const { return options_; }

 private:
  struct Entry {
    uid_t uid = 0;
    gid_t gid = 0;
    std::string agent_id;
    size_t leases = 0;
    std::chrono::steady_clock::time_point idle_since;
    std::shared_ptr<boost::asio::steady_timer> timer;
  };
  void release(const std::string& path);
  void schedule(const std::string& path, Entry& entry);  // with mu_ held
  void expire(const std::string& path);
  void remove_now(const std::string& path, const Entry& entry);  // with mu_ held

  boost::asio::io_context& io_;
  boost::asio::thread_pool& blocking_;
  PrivateTmpOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;  // by path
  uint64_t trash_counter_ = 0;
};

}  // namespace codexd::orchestrator
