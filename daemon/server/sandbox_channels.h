// The daemon's SandboxChannelSink: reads a sandbox's one handover message
// (platform/sandbox/sandbox_handover.h) on the core thread and hands each part on: the proxy
// ports to the network proxy (re-sent over a fresh pair as the proxy's own message), the exec
// listener to the exec supervisor. A malformed handover closes whatever arrived: the command's
// connections are refused, and its execs fail (the listener closes) rather than run unseen.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>

#include "daemon/exec/sandbox_channel.h"
#include "daemon/orchestrator/exec_supervisor.h"
#include "daemon/server/proxy_channels.h"

namespace codexd::server {

// Either part may be null: a channel that carries it is then refused before the spawn.
std::shared_ptr<exec::SandboxChannelSink> make_sandbox_channels(boost::asio::io_context& core,
                                                                std::shared_ptr<ProxyChannels> proxy,
                                                                std::shared_ptr<orchestrator::ExecSupervisor> supervisor);

}  // namespace codexd::server
