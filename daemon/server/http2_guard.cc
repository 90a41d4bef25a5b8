#include "daemon/server/http2_guard.h"

#include <algorithm>

namespace codexd::server {

namespace {

constexpr uint8_t kHeaders = 0x1;
constexpr uint8_t kPushPromise = 0x5;
constexpr uint8_t kContinuation = 0x9;
constexpr uint8_t kEndHeaders = 0x4;

}  // namespace

const std::string& Http2HeaderGuard::feed(std::span<const char> bytes) {
  while (!bytes.empty() && refusal_.empty()) {
    size_t take = 0;
    if (preface_left_ > 0) {
      take = std::min(preface_left_, bytes.size());
      preface_left_ -= take;
    } else if (payload_left_ > 0) {
      take = std::min(payload_left_, bytes.size());
      payload_left_ -= take;
    } else {
      take = std::min(kFrameHeaderBytes - header_have_, bytes.size());
      std::copy_n(bytes.begin(), take, header_ + header_have_);
      header_have_ += take;
      if (header_have_ == kFrameHeaderBytes) {
        header_have_ = 0;
        on_frame_header();
      }
    }
    bytes = bytes.subspan(take);
  }
  return refusal_;
}

void Http2HeaderGuard::on_frame_header() {
  const size_t length = (size_t{header_[0]} << 16) | (size_t{header_[1]} << 8) | header_[2];
  const uint8_t type = header_[3];
  const bool end_headers = (header_[4] & kEndHeaders) != 0;
  const uint32_t stream = ((uint32_t{header_[5]} & 0x7f) << 24) | (uint32_t{header_[6]} << 16) |
                          (uint32_t{header_[7]} << 8) | header_[8];
  payload_left_ = length;
  if (type == kPushPromise) {
    refusal_ = "a client sent PUSH_PROMISE (an HTTP/2 protocol error)";
    return;
  }
  if (in_block_ && (type != kContinuation || stream != block_stream_)) {
    refusal_ = "a frame other than CONTINUATION inside an unfinished header block (an HTTP/2 protocol error)";
    return;
  }
  if (type == kContinuation && !in_block_) {
    refusal_ = "CONTINUATION outside a header block (an HTTP/2 protocol error)";
    return;
  }
  if (type != kHeaders && type != kContinuation) return;
  if (type == kHeaders) {
    block_stream_ = stream;
    block_bytes_ = 0;
    block_frames_ = 0;
  }
  block_bytes_ += length;
  ++block_frames_;
  in_block_ = !end_headers;
  if (block_bytes_ > limits_.max_header_block_bytes) {
    refusal_ = "header block over " + std::to_string(limits_.max_header_block_bytes) + " bytes on stream " +
               std::to_string(stream) + " (HEADERS and CONTINUATION frames)";
  } else if (block_frames_ > limits_.max_header_block_frames) {
    refusal_ = "header block in more than " + std::to_string(limits_.max_header_block_frames) + " frames on stream " +
               std::to_string(stream);
  }
}

}  // namespace codexd::server
