// A listening TCP socket on 127.0.0.1 with a kernel-chosen port: what tests and the bench
// attach in place of the sandbox helper's listeners.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "base/unique_fd.h"

namespace codexd::network {

struct LoopbackListener {
  UniqueFd fd;
  uint16_t port = 0;
};

Result<LoopbackListener> listen_on_loopback(int backlog = 128);

}  // namespace codexd::network
