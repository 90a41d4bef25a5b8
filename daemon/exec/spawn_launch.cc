#include "daemon/exec/spawn_launch.h"

#include "platform/posix/fd_passing.h"

namespace codexd::exec {

Result<LaunchedProcess> spawn_launch(const LaunchSpec& launch, posix::StdioMode stdio, const ChannelOwner& owner,
                                     bool stdin_pipe) {
  posix::SpawnRequest request;
  request.executable = launch.executable;
  request.argv = launch.argv;
  request.env = launch.env;
  request.cwd = launch.cwd;
  request.stdio = stdio;
  request.stdin_pipe = stdin_pipe;
  request.rows = launch.rows;
  request.cols = launch.cols;
  request.credentials = launch.run_as;
  request.ignore_forwarded_signals = launch.forwards_signals;

  posix::SocketPair channel;
  if (launch.proxy_channel) {
    if (!launch.proxy_channels) {
      return FailedPrecondition("network mode proxy needs the daemon's network proxy, which is not running here");
    }
    CODEXD_ASSIGN_OR_RETURN(channel, posix::make_seqpacket_pair());
    request.pass_fd = channel.second.get();
  }
  LaunchedProcess launched;
  CODEXD_ASSIGN_OR_RETURN(launched.process, posix::spawn_process(request));
  // The child holds its own copy now; ours must not linger (the peer would never see EOF).
  channel.second.reset();
  if (launch.proxy_channel) launched.keepalive = launch.proxy_channels->accept_channel(std::move(channel.first), owner);
  return launched;
}

}  // namespace codexd::exec
