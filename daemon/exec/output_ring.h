// The window of a session's output stream that Attach can replay: the newest `capacity`
// bytes, addressed by absolute stream offsets (offset 0 = the first byte the command wrote).
// Memory follows the output: an idle session holds nothing, and the buffer grows (doubling)
// until it holds `capacity` bytes, after which it wraps. While it grows, byte `offset` sits
// at index `offset`, which is also `offset % capacity`, so both phases index the same way.
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
  // The stream continues at `offset` (> end_offset()): the bytes in between were lost (a
  // session adopted from its shim starts at the oldest byte the shim still held). Nothing
  // is retained afterwards until the next append.
  void skip_to(uint64_t offset);

  uint64_t begin_offset() const { return end_ - size_; }  // oldest retained byte
  uint64_t end_offset() const { return end_; }            // total bytes ever appended
  size_t capacity() const { return capacity_; }
  size_t allocated_bytes() const { return buffer_.capacity(); }

  // Up to `max_bytes` starting at `offset` (which must be within [begin, end]).
  std::string read(uint64_t offset, size_t max_bytes) const;
  // The same into `out` (replacing its contents, reusing its capacity): no allocation per read
  // for a caller that keeps its buffer.
  void read_into(uint64_t offset, size_t max_bytes, std::string& out) const;
  // Exactly `n` bytes from `offset` (offset + n <= end_offset()) to `dest`.
  void copy_to(uint64_t offset, size_t n, char* dest) const;
  // Exactly `n` bytes from `offset` appended to `out`.
  void append_to(uint64_t offset, size_t n, std::string& out) const;

 private:
  void grow_to_hold(size_t bytes);

  size_t capacity_;
  std::vector<char> buffer_;  // size() == min(end_, capacity_)
  size_t size_ = 0;   // bytes retained
  uint64_t end_ = 0;  // stream offset one past the newest byte
};

}  // namespace codexd::exec
