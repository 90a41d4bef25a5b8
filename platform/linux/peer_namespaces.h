// Lets the daemon refuse connections from inside a sandbox: a sandboxed command lives in
// its own user and pid namespaces (bwrap backend), so its peer pid either is 0 (not visible
// from the daemon's pid namespace) or names a process whose /proc/<pid>/ns/{user,pid} differ
// from the daemon's. Fails closed: anything that cannot be checked counts as "different".
//
// Note: under the Landlock backend a sandboxed command shares the daemon's namespaces; there
// the filter refuses creating Unix sockets, so it cannot connect in the first place.
#pragma once

#include <sys/types.h>

#include <string>

namespace codexd::sandbox::linux_backend {

// True only when `pid` is positive, alive, and shares the caller's user and pid namespaces.
bool peer_in_same_namespaces(pid_t pid, std::string* why);

// Same check for the peer of a connected Unix socket (SO_PEERCRED). When the kernel offers
// SO_PEERPIDFD the peer process is pinned, so a recycled pid cannot pass for the peer.
// `peer_gone` (optional) is set when the answer is false only because the peer had already
// exited (an ordinary client that connects and quits at once), not because it is elsewhere.
bool socket_peer_in_same_namespaces(int socket_fd, std::string* why, bool* peer_gone = nullptr);

}  // namespace codexd::sandbox::linux_backend
