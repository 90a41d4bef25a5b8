// The one place a LaunchSpec becomes a process (sessions, one-shot commands, RunSandboxed).
#pragma once

#include <memory>

#include "base/status.h"
#include "daemon/exec/launch_spec.h"
#include "daemon/exec/proxy_channel.h"
#include "platform/posix/spawn.h"

namespace codexd::exec {

struct LaunchedProcess {
  posix::SpawnedProcess process;
  // Held while the process runs (the proxy ports of its sandbox); null when none.
  std::shared_ptr<void> keepalive;
};

// Spawns `launch` with `stdio` (+ a stdin pipe when asked). A launch with a proxy channel gets
// a fresh SOCK_SEQPACKET pair: the child's end as descriptor 3, the daemon's end to
// launch.proxy_channels with `owner`. No sink for such a launch: kFailedPrecondition, nothing runs.
Result<LaunchedProcess> spawn_launch(const LaunchSpec& launch, posix::StdioMode stdio, const ChannelOwner& owner,
                                     bool stdin_pipe = false);

}  // namespace codexd::exec
