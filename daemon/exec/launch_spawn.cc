#include "daemon/exec/launch_spawn.h"

#include "platform/posix/fd_passing.h"

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
  request.console_socket = launch.console && stdio == posix::StdioMode::kPty;
  request.program_fd = launch.seccomp_program ? launch.seccomp_program->get() : -1;
  return request;
}

Result<LaunchedProcess> spawn_launch(const LaunchSpec& launch, posix::SpawnRequest request, const ChannelOwner& owner,
                                     const Spawner& spawner) {
  posix::SocketPair channel;
  if (launch.channel.any()) {
    if (!launch.channels) {
      return FailedPrecondition(launch.channel.proxy ? "network mode proxy needs the daemon's network proxy, which is not running here"
                                                     : "exec supervision is not running in this daemon");
    }
    CODEXD_RETURN_IF_ERROR(launch.channels->ready_for(launch.channel));
    CODEXD_ASSIGN_OR_RETURN(channel, posix::make_seqpacket_pair());
    request.pass_fd = channel.second.get();
  }
  LaunchedProcess launched;
  CODEXD_ASSIGN_OR_RETURN(launched.process, spawner ? spawner(request, channel.first) : posix::spawn_process(request));
  // The child holds its own copy now; ours must not linger (the peer would never see EOF).
  channel.second.reset();
  if (launch.channel.any()) launched.keepalive = launch.channels->accept_channel(std::move(channel.first), owner);
  if (launch.private_tmp_lease) {
    using Both = std::pair<std::shared_ptr<void>, std::shared_ptr<const void>>;
    launched.keepalive = std::make_shared<Both>(std::move(launched.keepalive), launch.private_tmp_lease);
  }
  return launched;
}

}  // namespace codexd::exec
