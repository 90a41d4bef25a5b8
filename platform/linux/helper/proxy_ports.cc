#include "platform/linux/helper/proxy_ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "base/unique_fd.h"
#include "platform/posix/fd_passing.h"

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

Result<ProxyPorts> hand_over_proxy_ports(const HelperConfig& config) {
  UniqueFd channel(config.proxy_fd);
  const bool own_namespace = config.mode == HelperMode::kBwrap;
  ProxyPorts wanted = own_namespace ? kNamespaceProxyPorts : ProxyPorts{0, 0};
  ProxyPorts bound;
  CODEXD_ASSIGN_OR_RETURN(UniqueFd http, listen_on_loopback(wanted.http, &bound.http));
  CODEXD_ASSIGN_OR_RETURN(UniqueFd socks, listen_on_loopback(wanted.socks, &bound.socks));
  std::string message = "codexd-proxy/1 http=" + std::to_string(bound.http) + " socks=" + std::to_string(bound.socks);
  CODEXD_RETURN_IF_ERROR(posix::send_fds(channel.get(), message, {http.get(), socks.get()}));
  return bound;
}

}  // namespace codexd::sandbox::linux_backend
