// What the in-sandbox helper must do, and its command-line form. The planner (daemon side)
// renders a HelperConfig into argv; codexd-sandbox-helper parses it back. Keeping both
// directions here means they cannot drift apart.
//
//   codexd-sandbox-helper --mode=bwrap|landlock --network=off|proxy|host [--channel-fd=N]
//       [--console-fd=N] [--seccomp-fd=N] [--supervise-exec] [--metadata-keeper] [--block-unix-sockets]
//       [--write=DIR]... [--read-only=PATH]... [--no-read=PATH]... [--write-file=FILE]...
//       [--setenv=NAME=VALUE]... [--init] -- COMMAND [ARGS...]
//   codexd-sandbox-helper --self-test
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "platform/sandbox/sandbox.h"

namespace codexd::sandbox::linux_backend {

enum class HelperMode { kBwrap, kLandlock };

struct HelperConfig {
  HelperMode mode = HelperMode::kBwrap;
  NetworkMode network = NetworkMode::kOff;
  // The channel to the daemon (required with kProxy or supervise_exec, refused otherwise): the
  // helper sends one message over it before the command starts and closes it (sandbox_channel.h).
  // kProxy: the listening sockets of the proxy ports (kNamespaceProxyPorts with bwrap,
  // ephemeral ports with Landlock); supervise_exec: the keeper's exec relay (exec_relay.h).
  int channel_fd = -1;
  // bwrap with --init, on a terminal: the console socket (LaunchPlan::console_fd). The helper
  // opens a PTY in the sandbox's /dev/pts, sends its master over this socket and gives the
  // slave to the command as its controlling terminal; if nobody takes the master, the command
  // keeps the terminal it was started on.
  int console_fd = -1;
  // The daemon's compiled seccomp programs (seccomp_program.h): a sealed memfd with the
  // command's filter and the keeper's, loaded as they are. -1: the helper compiles them itself
  // with libseccomp (a helper run by hand, the self-test).
  int seccomp_fd = -1;
  // Refuse socket(AF_UNIX) and AF_UNIX datagram socketpairs: set when the filesystem view
  // cannot hide host sockets (Landlock has no mount namespace).
  bool block_unix_sockets = false;
  // Every execve/execveat of the command and its descendants is reported to the daemon before
  // it happens (seccomp user notification served by the keeper, which relays each one over
  // the channel's exec relay) and, unless `exec_audit_only`, waits for the daemon's answer;
  // creating another listener is refused, so nothing inside can answer in the keeper's place.
  // Needs `metadata_keeper` (the filter's one listener is the keeper's).
  bool supervise_exec = false;
  // Audit mode: the keeper lets each exec go on as soon as its record is sent.
  bool exec_audit_only = false;
  // The helper stays as the command's parent and performs its chmod and chown calls inside
  // `writable`, not below `read_only` (helper/metadata_keeper.h), and relays its execs under
  // supervise_exec. Without it Landlock refuses them everywhere, and under bwrap the mounts
  // alone decide (the setuid bit refused).
  bool metadata_keeper = false;
  // Landlock: write is granted below `writable` except below `read_only`; read is granted
  // everywhere except below `unreadable`; `writable_files` are single files. The metadata
  // keeper (both backends) changes modes and owners below `writable` except below `read_only`.
  std::vector<std::string> writable;
  std::vector<std::string> read_only;
  std::vector<std::string> unreadable;
  std::vector<std::string> writable_files;
  // Loader-affecting variables (LD_PRELOAD ...) applied only after the filter is in place,
  // so that neither bwrap nor the helper itself ever runs with them.
  std::vector<std::string> deferred_env;
  std::vector<std::string> command;
  // Stay as the sandbox's init (bwrap): run the command as a child in its own process group
  // (the terminal's foreground group on a TTY), forward kForwardedSignals to that group, reap
  // every orphan, exit with the command's status.
  bool init = false;
  bool self_test = false;
};

std::vector<std::string> render_helper_args(const HelperConfig& config);
Result<HelperConfig> parse_helper_args(const std::vector<std::string>& args);

}  // namespace codexd::sandbox::linux_backend
