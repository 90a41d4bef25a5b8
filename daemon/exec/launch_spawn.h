// The one place a LaunchSpec becomes a process (sessions, one-shot commands, RunSandboxed):
// what spawn_process takes, the command's resource group (created before the spawn so that
// the child joins it before it runs anything), and the sandbox's channel (network mode proxy,
// exec supervision).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "daemon/exec/launch_spec.h"
#include "platform/limits/limits.h"
#include "platform/posix/spawn.h"

namespace codexd::exec {

// Null `manager`: no group (the process group alone), returned as a null pointer.
Result<std::unique_ptr<limits::ResourceGroup>> create_group(limits::LimitsManager* manager, const LaunchSpec& launch,
                                                            const std::string& name);

posix::SpawnRequest spawn_request(const LaunchSpec& launch, posix::StdioMode stdio);

struct LaunchedProcess {
  posix::SpawnedProcess process;
  // Held while the process runs (the proxy ports of its sandbox, the private /tmp lease); null
  // when none.
  std::shared_ptr<void> keepalive;
};

// Spawns `request` (built by spawn_request for `launch`). A launch with a channel gets a
// fresh SOCK_SEQPACKET pair: the child's end as descriptor 3, the daemon's end to
// launch.channels with `owner`. No sink for such a launch, or one not ready for what the channel
// carries: kFailedPrecondition, nothing runs. `spawner` starts the process (default
// posix::spawn_process; a durable session's shim spawns it instead). It gets the daemon's end
// of the channel (invalid without one); a spawner that hands that end on (the shim keeps the
// sandbox's handover and relays it) leaves in its place the end the sink reads instead.
using Spawner = std::function<Result<posix::SpawnedProcess>(const posix::SpawnRequest&, UniqueFd& channel)>;
Result<LaunchedProcess> spawn_launch(const LaunchSpec& launch, posix::SpawnRequest request, const ChannelOwner& owner,
                                     const Spawner& spawner = nullptr);

}  // namespace codexd::exec
