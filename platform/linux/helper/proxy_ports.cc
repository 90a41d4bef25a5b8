#include "platform/linux/helper/proxy_ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "base/unique_fd.h"
#include "platform/posix/fd_passing.h"
#include "platform/sandbox/sandbox_handover.h"

namespace codexd::sandbox::linux_backend {
namespace {

constexpr int kBacklog = 128;

Result<UniqueFd> listen_on_loopback(uint16_t port, uint16_t* bound_port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoStatus("proxy port socket", errno);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    return ErrnoStatus("bind proxy port 127.0.0.1:" + std::to_string(port), errno);
  }
  if (::listen(fd.get(), kBacklog) != 0) return ErrnoStatus("listen on the proxy port", errno);
  socklen_t length = sizeof address;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return ErrnoStatus("getsockname of the proxy port", errno);
  }
  *bound_port = ntohs(address.sin_port);
  return fd;
}

}  // namespace

Result<OpenedProxyPorts> open_proxy_ports(const HelperConfig& config) {
  const bool own_namespace = config.mode == HelperMode::kBwrap;
  ProxyPorts wanted = own_namespace ? kNamespaceProxyPorts : ProxyPorts{0, 0};
  OpenedProxyPorts opened;
  CODEXD_ASSIGN_OR_RETURN(opened.http, listen_on_loopback(wanted.http, &opened.ports.http));
  CODEXD_ASSIGN_OR_RETURN(opened.socks, listen_on_loopback(wanted.socks, &opened.ports.socks));
  return opened;
}

Status hand_over(const HelperConfig& config, OpenedProxyPorts* ports, UniqueFd exec_relay) {
  UniqueFd channel(config.channel_fd);
  SandboxHandover handover;
  std::vector<int> fds;
  if (ports != nullptr) {
    handover.proxy = ports->ports;
    fds = {ports->http.get(), ports->socks.get()};
  }
  if (exec_relay.valid()) {
    handover.exec_relay = true;
    fds.push_back(exec_relay.get());
  }
  CODEXD_RETURN_IF_ERROR(posix::send_fds(channel.get(), encode_handover(handover), fds));
  if (ports != nullptr) {
    ports->http.reset();
    ports->socks.reset();
  }
  return Status::Ok();
}

}  // namespace codexd::sandbox::linux_backend
