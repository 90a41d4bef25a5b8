#include "daemon/network/proxy_service.h"

#include "daemon/network/listener_loop.h"
#include "daemon/network/service_state.h"

namespace codexd::network {

std::string_view to_string(Protocol protocol) {
  switch (protocol) {
    case Protocol::kHttp: return "http";
    case Protocol::kHttps: return "https";
    case Protocol::kSocks5Tcp: return "socks5_tcp";
  }
  return "unknown";
}

void ProxyAttachment::close(std::function<void()> closed) {
  if (state_) {
    state_->close(std::move(closed));
    state_.reset();
  } else if (closed) {
    closed();
  }
}

ProxyService::ProxyService(asio::io_context& io, ProxyOptions options, std::shared_ptr<NetworkDecider> decider,
                           std::function<void(const ConnectionRecord&)> audit)
    : state_(std::make_shared<ServiceState>(io, options, std::move(decider), std::move(audit))) {}

ProxyService::~ProxyService() = default;

Result<std::unique_ptr<ProxyAttachment>> ProxyService::attach(ProxyOrigin origin, std::vector<ProxyListener> listeners) {
  if (listeners.empty()) return InvalidArgument("proxy attach: no listeners");
  if (!state_->decider) return FailedPrecondition("proxy attach: the service has no decider");
  auto origin_state = std::make_shared<OriginState>(state_, std::move(origin));
  std::vector<std::shared_ptr<ListenerLoop>> loops;
  for (auto& listener : listeners) {
    CODEXD_ASSIGN_OR_RETURN(auto loop, ListenerLoop::adopt(state_->io, std::move(listener), origin_state));
    loops.push_back(std::move(loop));
  }
  for (auto& loop : loops) {
    origin_state->add_listener(loop);
    loop->start();
  }
  return std::make_unique<ProxyAttachment>(std::move(origin_state));
}

ProxyCounters ProxyService::counters() const { return state_->counters(); }

}  // namespace codexd::network
