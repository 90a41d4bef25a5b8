// The Landlock backend's metadata keeper. Landlock does not govern file modes or owners, so
// without a mount namespace the filter had to refuse chmod and chown everywhere, and
// `chmod +x build.sh`, `install -m`, `tar x` or `git checkout` of executable files failed in
// the workspace. With the keeper, the helper forks before loading its filter: the child goes
// on to become the command, and its filter sends chmod, fchmod, fchmodat, fchmodat2, chown,
// fchown, lchown and fchownat to a seccomp user-notification listener that the parent, the
// keeper, serves. The keeper performs each call itself through WritableScope (inside a
// writable root, not below a read-only path, no setuid bit) and answers with its result:
// EPERM anywhere else, as before.
//
// The keeper runs with the command's credentials, Landlock domain and no_new_privs, without
// capabilities, so a change it makes is one the command could make under bwrap. It stays the
// session's process: it forwards kForwardedSignals to the command's group and exits with the
// command's status (dying of the same signal); the command dies with it (PR_SET_PDEATHSIG).
//
// Under exec supervision the same listener also gets every execve/execveat (a filter chain
// has one listener): the keeper relays them to the daemon (helper/exec_forwarder.h).
#pragma once

#include <linux/filter.h>

#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "platform/linux/helper_config.h"

namespace codexd::sandbox::linux_backend {

// Forks (fork_command, `own_terminal` as there). Returns only in the child, in a process group
// or session of its own, with its end of the link to the keeper. The parent becomes the keeper
// and never returns; under bwrap (config.init) it is the sandbox's init as well. `exec_relay`
// (exec supervision, else invalid): the keeper's end of the exec relay; the child closes it.
// The keeper loads `keeper_program` (the daemon's, seccomp_program.h) or, when null, compiles
// its filter.
Result<UniqueFd> start_metadata_keeper(const HelperConfig& config, bool own_terminal, UniqueFd exec_relay,
                                       const std::vector<sock_filter>* keeper_program = nullptr);

// In the child, once its filter is loaded: sends the filter's listener to the keeper, waits
// until the keeper has its own filter and the listener, and closes both (the command must hold
// neither: with the listener it could answer for the keeper).
Status hand_listener_to_keeper(UniqueFd link, UniqueFd listener);

}  // namespace codexd::sandbox::linux_backend
