// Connection::authorize_and_connect: decision, limited mode, our own DNS resolution, the
// address-class check on what was resolved (this is what defeats DNS rebinding: the address
// we connect to is the one we checked), and the connect.
#include <string>

#include "daemon/network/address_class.h"
#include "daemon/network/connection.h"
#include "daemon/network/service_state.h"

namespace codexd::network {

namespace {

std::string endpoint_text(const tcp::endpoint& endpoint) {
  std::string address = endpoint.address().to_string();
  if (endpoint.address().is_v6()) address = "[" + address + "]";
  return address + ":" + std::to_string(endpoint.port());
}

bool is_safe_method(const std::string& method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS";
}

}  // namespace

std::optional<std::string> Connection::limited_refusal(const NetworkVerdict& verdict) const {
  if (!verdict.limited) return std::nullopt;
  const ConnectTarget& target = record_.target;
  if (target.protocol != Protocol::kHttp) {
    return "limited network access allows only GET, HEAD and OPTIONS over plain http://; a " +
           std::string(to_string(target.protocol)) + " tunnel cannot be inspected";
  }
  if (is_safe_method(target.method)) return std::nullopt;
  return "limited network access allows only GET, HEAD and OPTIONS (not " + target.method + ")";
}

asio::awaitable<Authorization> Connection::authorize_and_connect() {
  std::optional<NetworkVerdict> verdict = co_await await_verdict();
  if (!verdict) co_return Authorization{Authorization::Outcome::kGone, record_.error};
  record_.reason = verdict->reason;
  std::optional<std::string> refusal;
  if (!verdict->allowed) refusal = verdict->reason.empty() ? "denied" : verdict->reason;
  if (!refusal) refusal = limited_refusal(*verdict);
  Authorization failure{Authorization::Outcome::kDenied, ""};
  std::vector<tcp::endpoint> endpoints;
  if (!refusal) {
    arm_deadline(options().connect_timeout_ms);
    endpoints = co_await resolve(failure);
    if (endpoints.empty()) {
      disarm_deadline();
      if (timed_out_) failure = {Authorization::Outcome::kTimedOut, "resolving " + record_.target.host + " timed out"};
      if (aborted_) failure.outcome = Authorization::Outcome::kGone;
      fail(failure.detail);
      co_return failure;
    }
    std::string class_refusal = pick_endpoints(endpoints, verdict->allow_non_public);
    if (!class_refusal.empty()) refusal = class_refusal;
  }
  if (refusal) {
    disarm_deadline();
    record_.reason = *refusal;
    service_->denied.fetch_add(1, std::memory_order_relaxed);
    co_return Authorization{Authorization::Outcome::kDenied, *refusal};
  }
  record_.allowed = true;
  service_->allowed.fetch_add(1, std::memory_order_relaxed);
  co_return co_await connect_any(endpoints);
}

// An IP literal as given, else the resolver's answers; empty with `failure` set otherwise.
asio::awaitable<std::vector<tcp::endpoint>> Connection::resolve(Authorization& failure) {
  const ConnectTarget& target = record_.target;
  error_code ec;
  auto literal = asio::ip::make_address(target.host, ec);
  if (!ec) co_return std::vector<tcp::endpoint>{tcp::endpoint(literal, target.port)};
  auto results = co_await resolver_.async_resolve(target.host, std::to_string(target.port),
                                                  tcp::resolver::numeric_service, into(ec));
  std::vector<tcp::endpoint> endpoints;
  if (ec) {
    failure = {Authorization::Outcome::kUnreachable, "cannot resolve " + target.host + ": " + ec.message()};
    co_return endpoints;
  }
  for (const auto& entry : results) endpoints.push_back(entry.endpoint());
  if (endpoints.empty()) failure = {Authorization::Outcome::kUnreachable, target.host + " has no address"};
  co_return endpoints;
}

// Keeps the acceptable endpoints; when none is, the refusal reason (else "").
std::string Connection::pick_endpoints(std::vector<tcp::endpoint>& endpoints, bool allow_non_public) const {
  if (allow_non_public) return "";
  std::vector<tcp::endpoint> acceptable;
  std::string refused;
  for (const auto& endpoint : endpoints) {
    AddressClass kind = classify(endpoint.address());
    if (kind == AddressClass::kPublic) {
      acceptable.push_back(endpoint);
    } else if (refused.size() < 200) {
      refused += (refused.empty() ? "" : ", ") + endpoint.address().to_string() + " (" + std::string(to_string(kind)) + ")";
    }
  }
  endpoints = std::move(acceptable);
  if (!endpoints.empty()) return "";
  const std::string& host = record_.target.host;
  error_code ec;
  asio::ip::make_address(host, ec);
  std::string what = ec ? host + " resolves to " + refused : refused + " is not a public address";
  return what + "; only a rule naming this host exactly allows it";
}

asio::awaitable<Authorization> Connection::connect_any(const std::vector<tcp::endpoint>& endpoints) {
  error_code ec;
  for (const auto& endpoint : endpoints) {
    error_code ignored;
    upstream_.close(ignored);
    co_await upstream_.async_connect(endpoint, into(ec));
    if (!ec) {
      disarm_deadline();
      upstream_.set_option(tcp::no_delay(true), ignored);
      client_.set_option(tcp::no_delay(true), ignored);
      record_.address = endpoint_text(endpoint);
      co_return Authorization{Authorization::Outcome::kConnected, ""};
    }
    if (timed_out_ || aborted_) break;
  }
  disarm_deadline();
  Authorization failure{Authorization::Outcome::kUnreachable,
                        "cannot connect to " + record_.target.host + ":" + std::to_string(record_.target.port) + ": " +
                            ec.message()};
  if (ec == asio::error::connection_refused) failure.outcome = Authorization::Outcome::kRefused;
  if (timed_out_) failure = {Authorization::Outcome::kTimedOut, "connecting to " + record_.target.host + " timed out"};
  if (aborted_) failure.outcome = Authorization::Outcome::kGone;
  fail(failure.detail);
  co_return failure;
}

}  // namespace codexd::network
