// The proxy engine's vocabulary: who owns a set of proxy listeners, what a client asked to
// reach, what the decider answered, and what is recorded when a connection ends.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/unique_fd.h"

namespace codexd::network {

// Spelled as Codex's network_rule protocols.
enum class Protocol { kHttp, kHttps /* CONNECT */, kSocks5Tcp };
std::string_view to_string(Protocol protocol);

// Who owns the listeners (one sandboxed command or session).
struct ProxyOrigin {
  uid_t uid = 0;
  std::string agent_id;
  uint64_t session_id = 0;
  std::string command;
};

// What the client asked to reach. `host` is lowercased without a trailing dot; an IP literal
// stays as given (IPv6 without brackets).
struct ConnectTarget {
  std::string host;
  uint16_t port = 0;
  Protocol protocol = Protocol::kHttp;
  std::string method;  // the HTTP method, "CONNECT", or "" for SOCKS5
};

struct NetworkVerdict {
  bool allowed = false;
  // Shown to the command in the 403 body and logged ("forbidden by network_rule in x.rules").
  std::string reason;
  // The deciding rule named this host or IP exactly: loopback/private/link-local destinations
  // are then permitted.
  bool allow_non_public = false;
  // Plain HTTP may only GET/HEAD/OPTIONS (Codex's "limited" mode). Tunnels (CONNECT, SOCKS5)
  // cannot be inspected, so a limited verdict refuses them.
  bool limited = false;
};

// Implemented by the orchestrator (config + rules + approvals). `done` may be called later
// (an approval) and from any thread, exactly once; the engine holds the client meanwhile.
class NetworkDecider {
 public:
  virtual ~NetworkDecider() = default;
  virtual void decide(const ProxyOrigin& origin, const ConnectTarget& target,
                      std::function<void(NetworkVerdict)> done) = 0;
  // decide() for the connection numbered `request_id` (unique within a service, never 0), which
  // may later be withdrawn. By default the same as decide().
  virtual void decide_for(uint64_t request_id, const ProxyOrigin& origin, const ConnectTarget& target,
                          std::function<void(NetworkVerdict)> done) {
    (void)request_id;
    decide(origin, target, std::move(done));
  }
  // The connection `request_id` closed before its answer: what was asked for it alone (a
  // pending network approval no other connection waits for) is withdrawn. Its `done` may still
  // be called; the connection ignores it.
  virtual void withdraw(uint64_t request_id) { (void)request_id; }
};

// One per client connection, handed to the audit callback when it ends. Never the request's
// path, query or body.
struct ConnectionRecord {
  ProxyOrigin origin;
  ConnectTarget target;  // empty host when the client never got as far as naming one
  bool allowed = false;
  std::string reason;
  std::string address;  // the ip:port actually connected, "" if none
  uint64_t bytes_up = 0;    // client -> upstream
  uint64_t bytes_down = 0;  // upstream -> client
  uint64_t duration_ms = 0;
  std::string error;  // "" when the connection ended normally
};

struct ProxyOptions {
  size_t max_header_bytes = 64 * 1024;
  int header_timeout_ms = 10'000;  // whole request head (HTTP) or greeting+request (SOCKS5)
  int connect_timeout_ms = 10'000;  // resolve + connect upstream
  int idle_timeout_ms = 300'000;    // relay: no byte either way for this long
  size_t max_connections_per_origin = 256;
  size_t max_connections_total = 4096;
  size_t relay_buffer_bytes = 256 * 1024;  // per direction (a pipe on Linux)
  bool relay_splice = true;  // false: read/write through userspace (the bench's comparison)
};

enum class ListenerKind { kHttp, kSocks5 };

// An already-listening TCP socket (any network namespace).
struct ProxyListener {
  UniqueFd fd;
  ListenerKind kind = ListenerKind::kHttp;
};

// Totals since the service started, for GetStatus and metrics.
struct ProxyCounters {
  uint64_t active_connections = 0;
  uint64_t total_allowed = 0;
  uint64_t total_denied = 0;  // refused by the decider, the address check, limited mode or a cap
  uint64_t bytes_up = 0;
  uint64_t bytes_down = 0;
};

}  // namespace codexd::network
