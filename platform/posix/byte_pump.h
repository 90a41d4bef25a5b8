// One direction of a byte relay between two non-blocking stream fds: bytes are read from a
// source into a bounded in-between buffer and written from it to a sink. On Linux the buffer
// is a pipe and both moves are splice(2), so relayed bytes never enter userspace; elsewhere
// (or where splice refuses the fd pair) it is a userspace buffer with read(2)/write(2).
#pragma once

#include <cstddef>
#include <memory>

#include "base/status.h"

namespace codexd::posix {

// What one fill() or drain() did. `bytes` > 0 is progress; otherwise the fd would block
// (wait for readiness) or, for fill(), the source reached end of stream.
struct PumpStep {
  size_t bytes = 0;
  bool would_block = false;
  bool end_of_stream = false;
};

class BytePump {
 public:
  virtual ~BytePump() = default;
  // Reads from `source` as much as the buffer has room for.
  virtual Result<PumpStep> fill(int source) = 0;
  // Writes buffered bytes to `sink`.
  virtual Result<PumpStep> drain(int sink) = 0;
  virtual size_t buffered() const = 0;
  virtual size_t capacity() const = 0;
  // "splice" or "copy": for the bench and logs.
  virtual const char* kind() const = 0;
};

enum class PumpKind { kBest, kCopy };

// kBest: splice through a pipe on Linux (capacity about `capacity`, rounded by the kernel),
// falling back to a copying pump if no pipe can be made. kCopy: always the copying pump.
Result<std::unique_ptr<BytePump>> make_byte_pump(size_t capacity, PumpKind kind = PumpKind::kBest);

}  // namespace codexd::posix
