#include "daemon/server/proxy_channels.h"

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <mutex>
#include <spdlog/spdlog.h>

#include "platform/posix/fd_passing.h"

namespace codexd::server {
namespace {

namespace asio = boost::asio;

// One sandbox's handover, from the spawn until its process has exited.
class Handover : public std::enable_shared_from_this<Handover> {
 public:
  Handover(asio::io_context& io, network::ProxyService& proxy, UniqueFd channel, network::ProxyOrigin origin)
      : proxy_(proxy), channel_(io, channel.release()), origin_(std::move(origin)) {}

  void start() {
    channel_.async_wait(asio::posix::stream_descriptor::wait_read,
                        [self = shared_from_this()](const boost::system::error_code& ec) {
                          if (!ec) self->receive();
                        });
  }

  // The process has exited: stop waiting, close the ports and their connections.
  void close() {
    asio::post(channel_.get_executor(), [self = shared_from_this()] {
      boost::system::error_code ignored;
      self->channel_.close(ignored);
      std::lock_guard lock(self->mu_);
      self->closed_ = true;
      self->attachment_.reset();
    });
  }

 private:
  void receive() {
    Result<posix::ReceivedFds> received = posix::receive_fds(channel_.native_handle());
    boost::system::error_code ignored;
    channel_.close(ignored);  // one message per sandbox
    if (!received.ok()) {
      spdlog::warn("proxy channel of session {} (agent {}): {}", origin_.session_id, origin_.agent_id,
                   received.status().message());
      return;
    }
    if (received->payload.rfind("codexd-proxy/1 ", 0) != 0 || received->fds.size() != 2) {
      spdlog::warn("proxy channel of session {}: unexpected handover \"{}\" with {} descriptors", origin_.session_id,
                   received->payload.substr(0, 64), received->fds.size());
      return;
    }
    std::vector<network::ProxyListener> listeners;
    listeners.push_back({std::move(received->fds[0]), network::ListenerKind::kHttp});
    listeners.push_back({std::move(received->fds[1]), network::ListenerKind::kSocks5});
    auto attached = proxy_.attach(origin_, std::move(listeners));
    if (!attached.ok()) {
      spdlog::warn("proxy for session {}: {}", origin_.session_id, attached.status().message());
      return;
    }
    std::lock_guard lock(mu_);
    if (!closed_) attachment_ = std::move(attached).value();
  }

  network::ProxyService& proxy_;
  asio::posix::stream_descriptor channel_;
  network::ProxyOrigin origin_;
  std::mutex mu_;
  bool closed_ = false;
  std::unique_ptr<network::ProxyAttachment> attachment_;
};

// What the session holds: dropping it ends the handover. Not copyable: a copy's destructor
// would end it early.
class Lease {
 public:
  explicit Lease(std::shared_ptr<Handover> handover) : handover_(std::move(handover)) {}
  ~Lease() { handover_->close(); }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

 private:
  std::shared_ptr<Handover> handover_;
};

class ProxyChannelsImpl final : public ProxyChannels {
 public:
  ProxyChannelsImpl(asio::io_context& io, network::ProxyService& proxy) : io_(io), proxy_(proxy) {}

  std::shared_ptr<void> accept_channel(UniqueFd channel, exec::ChannelOwner owner) override {
    network::ProxyOrigin origin{owner.uid, owner.agent_id, static_cast<uint64_t>(owner.session_id), owner.command};
    auto handover = std::make_shared<Handover>(io_, proxy_, std::move(channel), std::move(origin));
    handover->start();
    return std::make_shared<Lease>(std::move(handover));
  }

 private:
  asio::io_context& io_;
  network::ProxyService& proxy_;
};

}  // namespace

std::shared_ptr<ProxyChannels> make_proxy_channels(asio::io_context& network_io, network::ProxyService& proxy) {
  return std::make_shared<ProxyChannelsImpl>(network_io, proxy);
}

}  // namespace codexd::server
