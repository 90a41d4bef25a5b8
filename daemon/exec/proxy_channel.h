// The daemon's side of a sandbox in network mode proxy: right after the spawn, the daemon's
// end of the proxy channel goes to a ProxyChannelSink (the network proxy, wired in by the
// composition root), which receives the sandbox's listening proxy ports over it. daemon/exec
// knows nothing about the proxy; it only keeps the sink's handle while the process runs.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "base/unique_fd.h"

namespace codexd::exec {

// Who a sandbox's connections belong to (for decisions, approvals and the audit log).
struct ChannelOwner {
  uid_t uid = 0;
  std::string agent_id;
  int session_id = 0;   // 0 for one-shot commands
  std::string command;  // shell-quoted argv, for reviewers and the audit log
};

class ProxyChannelSink {
 public:
  virtual ~ProxyChannelSink() = default;
  // Takes the daemon's end of a just-spawned sandbox's channel. The returned handle keeps that
  // sandbox's proxy ports open; the caller drops it when the process has exited.
  virtual std::shared_ptr<void> accept_channel(UniqueFd channel, ChannelOwner owner) = 0;
};

}  // namespace codexd::exec
