// The daemon's side of a sandbox's channel (network mode proxy, exec supervision): right after
// the spawn, the daemon's end goes to a SandboxChannelSink (wired in by the composition root),
// which receives the sandbox's one handover message over it (platform/sandbox/
// sandbox_handover.h: the listening proxy ports, the exec listener) and hands each part to
// whoever serves it. daemon/exec knows nothing about either; it only keeps the sink's handle
// while the process runs.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "base/status.h"
#include "base/unique_fd.h"

namespace codexd::exec {

// Who a sandbox's connections and execs belong to (for decisions, approvals and the audit log).
struct ChannelOwner {
  uid_t uid = 0;
  std::string agent_id;
  int session_id = 0;   // 0 for one-shot commands
  std::string command;  // shell-quoted argv, for reviewers and the audit log
  // Adopted from a previous daemon: the sandbox's command is already running (so the first
  // exec its channel reports is a nested one).
  bool adopted = false;
};

// What a launch's channel will carry (LaunchPlan: network mode proxy, exec supervision).
struct ChannelContents {
  bool proxy = false;
  bool exec_relay = false;
  bool any() const { return proxy || exec_relay; }
};

class SandboxChannelSink {
 public:
  virtual ~SandboxChannelSink() = default;
  // Before the spawn: kFailedPrecondition when a part of `contents` has nobody here to take it
  // (the network proxy or exec supervision is not running); nothing is started then.
  virtual Status ready_for(ChannelContents contents) const = 0;
  // Takes the daemon's end of a just-spawned (or adopted) sandbox's channel. The returned handle
  // keeps what came over it (proxy ports, the exec listener) in service; the caller drops it
  // when the process has exited.
  virtual std::shared_ptr<void> accept_channel(UniqueFd channel, ChannelOwner owner) = 0;
};

}  // namespace codexd::exec
