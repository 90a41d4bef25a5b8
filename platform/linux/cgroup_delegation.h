// A cgroup subtree that systemd gave codexd (Delegate=yes): how to tell one, how to live in
// it, and how to ask for one in user mode.
//
// System mode: the packaged unit has Delegate=yes, so codexd's own cgroup is its to manage.
// cgroup v2 lets only leaves hold processes where controllers are enabled below, so codexd
// moves itself into <own>/daemon (with a memory.min floor) and its sessions live beside it in
// <own>/sessions/<agent>/<group>.
// User mode: where codexd's own cgroup is not writable, it asks the user's systemd for a
// transient scope with Delegate=yes holding only itself (D-Bus StartTransientUnit) and waits
// for the job; without a user bus (a container, no login session) that fails with the reason.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "platform/limits/limits.h"

namespace codexd::limits::cgroups {

// systemd marks a delegated cgroup with the xattr trusted.delegate=1 (system manager) or
// user.delegate=1 (user manager), systemd >= 251.
bool delegated_by_systemd(const std::string& dir);

// Moves the calling process (all its threads) into <own_dir>/daemon. Returns the leaf.
Result<std::string> enter_daemon_leaf(const std::string& own_dir);

// The daemon's memory floor on its leaf, where the memory controller is there (0: none).
// Returns what it did, for the status ("memory.min 64 MiB", "" when nothing).
std::string set_memory_floor(const std::string& leaf, uint64_t memory_min);

// Asks the user's systemd (sd-bus, the user bus) for a transient scope `unit` ("codexd-1234.scope")
// with Delegate=yes and this process in it, and waits for the job (at most `timeout_ms`).
// An error says why (no user bus, refused, job failed).
Status move_into_delegated_scope(const std::string& unit, int timeout_ms);

}  // namespace codexd::limits::cgroups
