#include "daemon/server/sandbox_channels.h"

#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <spdlog/spdlog.h>

#include "platform/posix/fd_passing.h"
#include "platform/sandbox/sandbox_handover.h"

namespace codexd::server {
namespace {

namespace asio = boost::asio;

// One sandbox's channel, from the spawn (or adoption) until its process has exited. Core thread.
class Handover : public std::enable_shared_from_this<Handover> {
 public:
  Handover(asio::io_context& core, UniqueFd channel, exec::ChannelOwner owner, std::shared_ptr<ProxyChannels> proxy,
           std::shared_ptr<orchestrator::ExecSupervisor> supervisor)
      : channel_(core, channel.release()), owner_(std::move(owner)), proxy_(std::move(proxy)), supervisor_(std::move(supervisor)) {}

  void start() {
    channel_.async_wait(asio::posix::stream_descriptor::wait_read,
                        [self = shared_from_this()](const boost::system::error_code& ec) {
                          if (!ec) self->receive();
                        });
  }

  // The process has exited: stop waiting and let go of what came.
  void close() {
    boost::system::error_code ignored;
    channel_.close(ignored);
    closed_ = true;
    proxy_lease_.reset();
    exec_lease_.reset();
  }

 private:
  void receive() {
    Result<posix::ReceivedFds> received = posix::receive_fds(channel_.native_handle());
    boost::system::error_code ignored;
    channel_.close(ignored);  // one message per sandbox
    if (closed_) return;
    if (!received.ok()) {
      if (received.status().code() != StatusCode::kNotFound) {
        spdlog::warn("sandbox channel of session {} (agent {}): {}", owner_.session_id, owner_.agent_id,
                     received.status().message());
      }
      return;
    }
    Result<sandbox::SandboxHandover> handover = sandbox::parse_handover(received->payload);
    if (!handover.ok() || handover->descriptor_count() != received->fds.size()) {
      spdlog::warn("sandbox channel of session {}: unexpected handover \"{}\" with {} descriptors", owner_.session_id,
                   received->payload.substr(0, 64), received->fds.size());
      return;
    }
    if (handover->proxy && proxy_) pass_to_proxy(*handover->proxy, received->fds[0], received->fds[1]);
    if (handover->exec_relay && supervisor_) {
      exec_lease_ = supervisor_->supervise(std::move(received->fds.back()), owner_);
    }
  }

  // The proxy reads its own message, as it did when it had the channel to itself.
  void pass_to_proxy(sandbox::ProxyPorts ports, const UniqueFd& http, const UniqueFd& socks) {
    Result<posix::SocketPair> pair = posix::make_seqpacket_pair();
    if (!pair.ok() || !posix::send_fds(pair->first.get(), sandbox::encode_proxy_message(ports), {http.get(), socks.get()}).ok()) {
      spdlog::warn("sandbox channel of session {}: cannot pass the proxy ports on", owner_.session_id);
      return;
    }
    proxy_lease_ = proxy_->accept_channel(std::move(pair->second), owner_);
  }

  asio::posix::stream_descriptor channel_;
  exec::ChannelOwner owner_;
  std::shared_ptr<ProxyChannels> proxy_;
  std::shared_ptr<orchestrator::ExecSupervisor> supervisor_;
  bool closed_ = false;
  std::shared_ptr<void> proxy_lease_;
  std::shared_ptr<void> exec_lease_;
};

class Lease {
 public:
  Lease(asio::io_context& core, std::shared_ptr<Handover> handover) : core_(core), handover_(std::move(handover)) {}
  ~Lease() { asio::post(core_, [handover = std::move(handover_)] { handover->close(); }); }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

 private:
  asio::io_context& core_;
  std::shared_ptr<Handover> handover_;
};

class SandboxChannels final : public exec::SandboxChannelSink {
 public:
  SandboxChannels(asio::io_context& core, std::shared_ptr<ProxyChannels> proxy,
                  std::shared_ptr<orchestrator::ExecSupervisor> supervisor)
      : core_(core), proxy_(std::move(proxy)), supervisor_(std::move(supervisor)) {}

  Status ready_for(exec::ChannelContents contents) const override {
    if (contents.proxy && !proxy_) {
      return FailedPrecondition("network mode proxy needs the daemon's network proxy, which is not running here");
    }
    if (contents.exec_relay && !supervisor_) return FailedPrecondition("exec supervision is not running in this daemon");
    return Status::Ok();
  }

  std::shared_ptr<void> accept_channel(UniqueFd channel, exec::ChannelOwner owner) override {
    auto handover = std::make_shared<Handover>(core_, std::move(channel), std::move(owner), proxy_, supervisor_);
    handover->start();
    return std::make_shared<Lease>(core_, std::move(handover));
  }

 private:
  asio::io_context& core_;
  std::shared_ptr<ProxyChannels> proxy_;
  std::shared_ptr<orchestrator::ExecSupervisor> supervisor_;
};

}  // namespace

std::shared_ptr<exec::SandboxChannelSink> make_sandbox_channels(asio::io_context& core, std::shared_ptr<ProxyChannels> proxy,
                                                                std::shared_ptr<orchestrator::ExecSupervisor> supervisor) {
  return std::make_shared<SandboxChannels>(core, std::move(proxy), std::move(supervisor));
}

}  // namespace codexd::server
