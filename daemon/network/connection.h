// One client connection of the proxy, whichever protocol it speaks: the parts every protocol
// shares. All of it runs on the connection's own strand; the protocol coroutines
// (http_session.cc, socks_session.cc) hold a shared_ptr for as long as they run, and the
// record goes to the audit callback when the last reference goes.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/network/asio.h"
#include "daemon/network/proxy_types.h"

namespace codexd::network {

class OriginState;
struct ServiceState;

// How far authorize_and_connect() got.
struct Authorization {
  enum class Outcome {
    kConnected,       // upstream is connected, the record has its address
    kDenied,          // the decider, limited mode or the address check refused: `detail` is the reason
    kUnreachable,     // name did not resolve, network unreachable, ...
    kRefused,         // the upstream refused the connection (RST)
    kTimedOut,        // connect_timeout_ms passed
    kGone,            // the client went away, or the attachment was closed
  };
  Outcome outcome = Outcome::kGone;
  std::string detail;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(std::shared_ptr<ServiceState> service, std::shared_ptr<OriginState> origin, uint64_t id);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  uint64_t id() const { return id_; }
  tcp::socket& client() { return client_; }
  tcp::socket& upstream() { return upstream_; }
  const Strand& strand() const { return strand_; }
  const ProxyOptions& options() const;
  ConnectionRecord& record() { return record_; }

  // Under the origin's lock once accepted: the record will be audited, and a slot released
  // when `holds_slot`.
  void mark_registered(bool holds_slot) {
    accepted_ = true;
    holds_slot_ = holds_slot;
  }
  // On the strand, first thing: `refusal` non-empty means over a connection cap.
  void mark_accepted(std::string refusal);
  const std::string& admission_refusal() const { return admission_refusal_; }

  // Any pending operation on either socket or the resolver is cancelled after `ms`; then
  // timed_out() is true. A new arm or disarm() replaces the previous one.
  void arm_deadline(int ms);
  void disarm_deadline();
  bool timed_out() const { return timed_out_; }
  bool aborted() const { return aborted_; }

  // Asks the decider about record().target, applies limited mode, resolves, checks the
  // address class and connects upstream.
  asio::awaitable<Authorization> authorize_and_connect();

  // Copies bytes upstream -> client (and client -> upstream when `both_ways`) until end of
  // stream both ways, an error, idle_timeout_ms without a byte, or abort.
  asio::awaitable<void> relay(bool both_ways);
  // For the HTTP request body, which Beast frames: the idle clock of relay().
  void touch() { last_activity_ = std::chrono::steady_clock::now(); }
  void start_idle_clock();
  void count_up(uint64_t bytes);
  void count_down(uint64_t bytes);

  // The first error sticks (later ones are consequences).
  void fail(std::string error);
  // Writes nothing more, reads and discards what the client still sends (bounded) so the
  // error response is not lost to a reset, then closes both sockets.
  asio::awaitable<void> linger_and_close();
  void close_all();
  // From the attachment (posted to the strand): closes everything, the coroutines unwind.
  void abort(std::string why);

 private:
  asio::awaitable<std::optional<NetworkVerdict>> await_verdict();
  void on_verdict(NetworkVerdict verdict);
  void watch_client_gone();
  std::optional<std::string> limited_refusal(const NetworkVerdict& verdict) const;
  asio::awaitable<std::vector<tcp::endpoint>> resolve(Authorization& failure);
  std::string pick_endpoints(std::vector<tcp::endpoint>& endpoints, bool allow_non_public) const;
  asio::awaitable<Authorization> connect_any(const std::vector<tcp::endpoint>& endpoints);
  asio::awaitable<void> pump(bool up);
  void on_idle_check(error_code ec);
  void wake(asio::steady_timer& event);

  const std::shared_ptr<ServiceState> service_;
  const std::shared_ptr<OriginState> origin_;
  const uint64_t id_;
  Strand strand_;
  tcp::socket client_;
  tcp::socket upstream_;
  tcp::resolver resolver_;
  asio::steady_timer deadline_;
  asio::steady_timer idle_timer_;
  asio::steady_timer decision_event_;  // never expires; cancelled to wake the waiter
  asio::steady_timer relay_event_;
  uint64_t deadline_generation_ = 0;
  bool accepted_ = false;
  bool holds_slot_ = false;
  bool timed_out_ = false;
  bool aborted_ = false;
  bool client_gone_ = false;
  bool up_done_ = false;
  bool relay_done_ = false;
  std::string admission_refusal_;
  std::optional<NetworkVerdict> verdict_;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_activity_;
  ConnectionRecord record_;
};

}  // namespace codexd::network
