// The window of a session's output stream that Attach can replay: the newest `capacity`
// bytes, addressed by absolute stream offsets (offset 0 = the first byte the command wrote).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace codexd::exec {

class OutputRing {
 public:
  explicit OutputRing(size_t capacity);

  void append(std::string_view data);

  uint64_t begin_offset() const { return end_ - size_; }  // oldest retained byte
  uint64_t end_offset() const { return end_; }            // total bytes ever appended
  size_t capacity() const { return buffer_.size(); }

  // Up to `max_bytes` starting at `offset` (which must be within [begin, end]).
  std::string read(uint64_t offset, size_t max_bytes) const;

 private:
  std::vector<char> buffer_;
  size_t size_ = 0;   // bytes retained
  uint64_t end_ = 0;  // stream offset one past the newest byte
};

}  // namespace codexd::exec
