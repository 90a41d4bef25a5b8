// The HTTP/2 frame guard (daemon/server/http2_guard.h) on arbitrary client bytes: never a
// crash, and the same answer whether the bytes come whole, in two pieces or one at a time
// (a socket read can end anywhere).
#include <cstddef>
#include <cstdint>
#include <string>

#include "daemon/server/http2_guard.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using codexd::server::Http2HeaderGuard;
  codexd::server::Http2GuardLimits limits;
  limits.max_header_block_bytes = 300;  // small, so that the inputs reach it
  limits.max_header_block_frames = 6;
  const std::string bytes(reinterpret_cast<const char*>(data), size);

  Http2HeaderGuard whole(limits);
  const std::string expected = whole.feed(bytes);

  const size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  Http2HeaderGuard halves(limits);
  halves.feed(std::span<const char>(bytes).first(cut));
  if (halves.feed(std::span<const char>(bytes).subspan(cut)) != expected) __builtin_trap();

  Http2HeaderGuard bytewise(limits);
  for (char c : bytes) bytewise.feed({&c, 1});
  if (bytewise.refusal() != expected) __builtin_trap();
  return 0;
}
