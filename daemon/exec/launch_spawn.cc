#include "daemon/exec/launch_spawn.h"

namespace codexd::exec {

Result<std::unique_ptr<limits::ResourceGroup>> create_group(limits::LimitsManager* manager, const LaunchSpec& launch,
                                                            const std::string& name) {
  if (manager == nullptr) return std::unique_ptr<limits::ResourceGroup>();
  return manager->create({launch.agent_id, name, launch.session_limits, launch.agent_budget});
}

posix::SpawnRequest spawn_request(const LaunchSpec& launch, posix::StdioMode stdio) {
  posix::SpawnRequest request;
  request.executable = launch.executable;
  request.argv = launch.argv;
  request.env = launch.env;
  request.cwd = launch.cwd;
  request.stdio = stdio;
  request.rows = launch.rows;
  request.cols = launch.cols;
  request.credentials = launch.run_as;
  request.ignore_forwarded_signals = launch.forwards_signals;
  return request;
}

}  // namespace codexd::exec
