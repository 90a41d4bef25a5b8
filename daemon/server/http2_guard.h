// A frame-level watch on the bytes an HTTP/2 client sends, for what gRPC 1.51 does not bound
// itself: a header block (HEADERS without END_HEADERS, then CONTINUATION frames) is buffered by
// its HPACK parser without limit, whatever header-list size the server advertises (10 MB sent
// took +235 MB of the daemon's memory, never given back; CVE-2023-33953, fixed upstream in
// 1.56.2, not in Debian 12's 1.51). The guard reads only the 9-byte frame headers; payloads
// pass unread. It refuses a header block over its byte or frame limit, and the frame
// sequences RFC 9113 makes a connection error (anything but CONTINUATION inside a block,
// CONTINUATION outside one, PUSH_PROMISE from a client), which gRPC would refuse anyway.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace codexd::server {

struct Http2GuardLimits {
  // gRPC advertises an 8 KiB header list (SETTINGS_MAX_HEADER_LIST_SIZE, decoded); a block of
  // 8x that in HPACK form is far over it for any real request.
  size_t max_header_block_bytes = 64 * 1024;
  // HEADERS plus its CONTINUATION frames: empty CONTINUATION frames cost the parser work too.
  size_t max_header_block_frames = 64;
};

class Http2HeaderGuard {
 public:
  explicit Http2HeaderGuard(Http2GuardLimits limits = {}) : limits_(limits) {}

  // The next bytes the client sent, in order, starting with the client preface (already
  // checked by the preface gate). Empty: nothing wrong so far; otherwise why the connection
  // must be closed. Once refused, every later call gives the same reason.
  const std::string& feed(std::span<const char> bytes);

  const std::string& refusal() const { return refusal_; }

 private:
  void on_frame_header();

  static constexpr size_t kPrefaceBytes = 24;
  static constexpr size_t kFrameHeaderBytes = 9;

  Http2GuardLimits limits_;
  size_t preface_left_ = kPrefaceBytes;
  uint8_t header_[kFrameHeaderBytes] = {};
  size_t header_have_ = 0;
  size_t payload_left_ = 0;
  bool in_block_ = false;
  uint32_t block_stream_ = 0;
  size_t block_bytes_ = 0;
  size_t block_frames_ = 0;
  std::string refusal_;
};

}  // namespace codexd::server
