// The window of a session's output stream that Attach can replay: the newest `capacity`
// bytes, addressed by absolute stream offsets (offset 0 = the first byte the command wrote).
// Memory follows the output: an idle session holds nothing, and the buffer grows (doubling)
// until it holds `capacity` bytes (plus the write slack, below), after which it wraps. While
// it grows, byte `offset` sits at index `offset`, which is also `offset % slots`, so both
// phases index the same way.
//
// Direct I/O: `prepare` hands out the slots the next bytes go to, so a read(2)/recv(2) can
// fill them in place and `commit` then appends them without a copy. With a `write_slack` of
// at least the largest prepared size, those slots never hold a retained byte: a read that is
// still in flight cannot clobber what a watcher may yet read.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace codexd::exec {

class OutputRing {
 public:
  explicit OutputRing(size_t capacity, size_t write_slack = 0);

  void append(std::string_view data);
  // The stream continues at `offset` (> end_offset()): the bytes in between were lost (a
  // session adopted from its shim starts at the oldest byte the shim still held). Nothing
  // is retained afterwards until the next append.
  void skip_to(uint64_t offset);

  // Where the next min(max_bytes, free_bytes()) bytes go, in stream order (the second span
  // is empty unless they wrap). Write some prefix of them, then commit(n); nothing else may
  // change the ring in between.
  std::array<std::span<char>, 2> prepare(size_t max_bytes);
  void commit(size_t n);
  // Bytes that can be prepared without touching a retained byte.
  size_t free_bytes() const { return slots_ - size_; }

  uint64_t begin_offset() const { return end_ - size_; }  // oldest retained byte
  uint64_t end_offset() const { return end_; }            // total bytes ever appended
  size_t capacity() const { return capacity_; }
  size_t allocated_bytes() const { return buffer_.capacity(); }

  // The retained bytes [offset, offset + n) in place (offset + n <= end_offset()): at most two
  // spans, valid until the ring changes.
  std::array<std::span<const char>, 2> spans(uint64_t offset, size_t n) const;
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

  size_t capacity_;           // bytes retained at most
  size_t slots_;              // capacity_ + write slack: byte `offset` lives at offset % slots_
  std::vector<char> buffer_;  // size() == min(end_, slots_) while growing, slots_ after
  size_t size_ = 0;   // bytes retained
  uint64_t end_ = 0;  // stream offset one past the newest byte
  bool prepared_growth_ = false;  // prepare() resized a growing buffer: commit() trims it
};

}  // namespace codexd::exec
