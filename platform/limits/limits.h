// Resource limits, accounting and whole-tree control for the commands codexd runs, behind an
// OS-neutral interface. A ResourceGroup holds one command's processes (a session or a
// one-shot run); the LimitsManager that made it is the platform's mechanism: cgroups on Linux
// (platform/linux/cgroup_*), plain rlimits elsewhere or where no cgroup is usable
// (rlimit_manager.h). docs/sandbox.md "Resource limits" describes what each mechanism does.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "platform/posix/spawn.h"

namespace codexd::limits {

// Absent: no limit of this kind at this level.
struct ResourceLimits {
  std::optional<uint64_t> pids_max;         // processes (and threads) at once
  std::optional<uint64_t> memory_max;       // bytes: the OOM killer acts past it
  std::optional<uint64_t> memory_swap_max;  // bytes of swap on top of memory_max
  std::optional<uint64_t> memory_high;      // bytes: reclaim/throttle above it (back-pressure)
  std::optional<uint32_t> cpu_weight;       // 1..10000, 100 = a fair share (cgroup v2 scale)
  std::optional<uint32_t> cpu_max_percent;  // cap in percent of one CPU (200 = two cores)
  std::optional<uint32_t> io_weight;        // 1..10000 (v2 io controller only)
  std::optional<uint64_t> cpu_seconds;      // rlimit mechanism only: RLIMIT_CPU

  bool operator==(const ResourceLimits&) const = default;
};

// What the command used. `known` false: the mechanism cannot measure (rlimits).
struct ResourceUsage {
  bool known = false;
  uint64_t peak_memory_bytes = 0;
  uint64_t cpu_user_usec = 0;
  uint64_t cpu_system_usec = 0;
  uint64_t peak_processes = 0;  // most processes at once (pids.peak)
};

// Which limit the group ran into, as far as the mechanism can tell.
enum class LimitHit { kNone, kOutOfMemory, kProcessLimit };

// How a command ended, for the API's `termination` field.
enum class Termination { kExited, kSignalled, kTimedOut, kCancelled, kOutOfMemory, kProcessLimit };
const char* termination_name(Termination t);  // "exited", "out_of_memory", ...

// A limit hit decides over the plain exit: an OOM kill always, the process limit when the
// command failed (it could not fork). Timeouts and cancellations are the caller's to decide.
Termination classify(LimitHit hit, int exit_code, bool killed_by_signal);

// "killed: memory limit 256 MiB reached" / "stopped: process limit 64 reached"; "" otherwise.
std::string termination_note(Termination t, const ResourceLimits& effective);

// "256 MiB", "1.5 GiB", "512 B".
std::string format_bytes(uint64_t bytes);

// Both levels as one: the smaller of each limit.
ResourceLimits tighter(const ResourceLimits& a, const ResourceLimits& b);

enum class Mechanism { kNone, kRlimit, kCgroupV1, kCgroupHybrid, kCgroupV2 };
const char* mechanism_name(Mechanism m);  // "none", "rlimit", "cgroup-v1", "cgroup-hybrid", "cgroup-v2"

struct MechanismStatus {
  Mechanism mechanism = Mechanism::kNone;
  std::string reason;                 // why this one ("cgroup v2 at /sys/fs/cgroup/unified ...")
  std::vector<std::string> controllers;  // "memory (v1)", "pids (v2)", ...
  std::string root;                   // where the groups live (cgroups)
  bool whole_tree_kill = false;       // kill reaches processes that left the process group
  bool accounting = false;            // ResourceUsage is measured
  std::vector<std::string> warnings;  // also logged at start
};

// Where a command goes: its agent (whose sessions share a budget) and its own name.
struct GroupRequest {
  std::string agent;          // "" is an agent of its own ("_")
  std::string name;           // unique among the agent's live groups ("12345", "run-7")
  ResourceLimits session;     // this command's own limits
  ResourceLimits agent_budget;  // the agent's total, shared by its commands
};

class ResourceGroup {
 public:
  virtual ~ResourceGroup() = default;  // kills what is left and removes the group
  // The daemon goes and leaves the command to the next one (durable sessions): from now on the
  // destructor neither kills nor removes anything, so the group and its limits stay.
  virtual void keep_for_next_daemon() {}
  // Where a restarted daemon finds this group again (LimitsManager::adopt); "" where it
  // cannot (a process group is only its leader's pid).
  virtual std::string place() const { return ""; }
  // Before the spawn: what the child does to join (cgroup.procs to write, rlimits).
  virtual void prepare(posix::SpawnRequest& request) const = 0;
  // A durable session's shim: the cgroup.procs files it joins when it is spawned (before the
  // command), so that its memory and processes count as the session's, in a part of the group
  // that signal_all and kill_all do not reach. Empty: the shim stays where the daemon is.
  // Valid until started().
  virtual std::vector<int> keeper_join_fds() const { return {}; }
  // After the spawn: the command's leader (also its process group).
  virtual void started(pid_t leader) = 0;
  // The leader was reaped: its pid may be reused, so the process group is no longer signalled.
  virtual void leader_reaped() {}
  // `signal` to every process of the group (the process group where nothing better exists).
  virtual Status signal_all(int signal) = 0;
  // SIGKILL to every process, also those that left the process group (where the mechanism can).
  virtual Status kill_all() = 0;
  virtual ResourceUsage usage() const = 0;
  virtual LimitHit limit_hit() const = 0;
  // The effective limits (both levels), for notes.
  virtual const ResourceLimits& effective() const = 0;
};

// A group a previous daemon made for a command that still runs (durable sessions).
struct AdoptedGroup {
  std::string agent;
  std::string place;         // ResourceGroup::place() of the group as made
  pid_t leader = -1;         // the command's leader, or -1 when its pid is no longer the command's
  ResourceLimits effective;  // as the group was made (for notes)
};

class LimitsManager {
 public:
  virtual ~LimitsManager() = default;
  virtual Result<std::unique_ptr<ResourceGroup>> create(const GroupRequest& request) = 0;
  // The group of an adopted session. By default its process group (nothing else is known);
  // the cgroup mechanism takes over the cgroup itself, with its accounting and whole-tree kill.
  virtual Result<std::unique_ptr<ResourceGroup>> adopt(const AdoptedGroup& group);
  virtual const MechanismStatus& status() const = 0;
  // Shutdown: kill every group's processes and remove what can be removed.
  virtual void shutdown() {}
  // Shutdown of a restart that keeps sessions: groups that still hold processes stay (with
  // their limits) for the next daemon; the rest goes as in shutdown().
  virtual void shutdown_keeping_running() { shutdown(); }
  // A file that kills every process of every group at once when "1" is written to it (cgroup
  // v2's cgroup.kill of the sessions' subtree), for a watcher that outlives the daemon
  // (posix/death_watch.h); empty where the mechanism has none.
  virtual std::string kill_file() const { return {}; }
  // Waits until the groups destroyed so far are removed (where the mechanism removes them off
  // the caller's thread) and any prepared groups are ready. For tests and benchmarks.
  virtual void settle() {}
};

// No limits at all: groups only know the process group (mechanism "none").
std::unique_ptr<LimitsManager> create_no_limits_manager(std::string reason);

}  // namespace codexd::limits
