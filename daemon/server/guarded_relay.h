// Every client connection reaches gRPC through a relay that watches its frames
// (daemon/server/http2_guard.h): the accepted socket stays with the relay, and gRPC gets one
// end of a socketpair. Client-to-server bytes are checked (frame headers only) and passed on;
// server-to-client bytes pass unchecked. A connection whose frames break the guard's limits
// is closed on both sides before gRPC has buffered more than the limit.
//
// One thread with its own io_context serves every relay, so a stalled client occupies no
// thread. Bytes move through one scratch buffer of that thread; a relay holds only what the
// other side could not take yet (at most one chunk per direction), and reads no more from a
// side until that is written, so a slow reader back-pressures gRPC as before.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>

#include "base/status.h"
#include "base/unique_fd.h"
#include "daemon/server/http2_guard.h"

namespace codexd::server {

class GuardedRelays {
 public:
  explicit GuardedRelays(Http2GuardLimits limits = {});
  ~GuardedRelays();  // stop()
  GuardedRelays(const GuardedRelays&) = delete;
  GuardedRelays& operator=(const GuardedRelays&) = delete;

  // Starts relaying `client` (uid and pid for the log) and returns the end to hand to gRPC.
  // `uid_limit` > 0: RESOURCE_EXHAUSTED (and `client` closed) when the uid already has that
  // many relayed connections; 0: not counted against a limit (an admin).
  Result<UniqueFd> relay(UniqueFd client, uid_t uid, pid_t pid, size_t uid_limit = 0);

  // Closes every relayed connection and joins the thread. Idempotent.
  void stop();

  // Connections relayed now, and closed so far for what the guard refused.
  size_t live() const;
  uint64_t refused() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace codexd::server
