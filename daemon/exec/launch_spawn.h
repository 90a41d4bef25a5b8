// From a LaunchSpec to what spawn_process takes, and the command's resource group (created
// before the spawn so that the child joins it before it runs anything). Shared by sessions and
// one-shot runs.
#pragma once

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

}  // namespace codexd::exec
