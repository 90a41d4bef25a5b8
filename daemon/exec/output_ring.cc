#include "daemon/exec/output_ring.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace codexd::exec {

OutputRing::OutputRing(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

void OutputRing::grow_to_hold(size_t bytes) {
  if (buffer_.capacity() >= bytes) return;
  size_t want = std::max<size_t>({bytes, buffer_.capacity() * 2, 4096});
  buffer_.reserve(std::min(want, capacity_));
}

void OutputRing::append(std::string_view data) {
  const size_t cap = capacity_;
  if (buffer_.size() < cap) {  // still growing: linear, index == offset
    const size_t take = std::min(cap - buffer_.size(), data.size());
    grow_to_hold(buffer_.size() + take);
    buffer_.insert(buffer_.end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(take));
    end_ += take;
    size_ = buffer_.size();
    data.remove_prefix(take);
    if (data.empty()) return;
  }
  if (data.size() >= cap) {
    // Only the last `cap` bytes survive; lay them out so that slot = offset % cap holds.
    end_ += data.size();
    data.remove_prefix(data.size() - cap);
    size_ = cap;
    uint64_t first = end_ - cap;
    for (size_t i = 0; i < cap;) {
      size_t slot = static_cast<size_t>((first + i) % cap);
      size_t run = std::min(cap - i, cap - slot);
      std::memcpy(buffer_.data() + slot, data.data() + i, run);
      i += run;
    }
    return;
  }
  size_t written = 0;
  while (written < data.size()) {
    size_t slot = static_cast<size_t>((end_ + written) % cap);
    size_t run = std::min(data.size() - written, cap - slot);
    std::memcpy(buffer_.data() + slot, data.data() + written, run);
    written += run;
  }
  end_ += data.size();
  size_ = std::min(cap, size_ + data.size());
}

void OutputRing::skip_to(uint64_t offset) {
  if (offset <= end_) return;
  // Wrapping layout from here on (slot = offset % capacity), whatever was held before.
  buffer_.assign(capacity_, '\0');
  buffer_.shrink_to_fit();
  end_ = offset;
  size_ = 0;
}

std::string OutputRing::read(uint64_t offset, size_t max_bytes) const {
  std::string out;
  read_into(offset, max_bytes, out);
  return out;
}

void OutputRing::read_into(uint64_t offset, size_t max_bytes, std::string& out) const {
  assert(offset >= begin_offset() && offset <= end_);
  const size_t n = static_cast<size_t>(std::min<uint64_t>(end_ - offset, max_bytes));
  out.resize(n);
  copy_to(offset, n, out.data());
}

void OutputRing::copy_to(uint64_t offset, size_t n, char* dest) const {
  assert(offset >= begin_offset() && offset + n <= end_);
  const size_t cap = capacity_;
  size_t copied = 0;
  while (copied < n) {
    size_t slot = static_cast<size_t>((offset + copied) % cap);
    size_t run = std::min(n - copied, cap - slot);
    std::memcpy(dest + copied, buffer_.data() + slot, run);
    copied += run;
  }
}

void OutputRing::append_to(uint64_t offset, size_t n, std::string& out) const {
  assert(offset >= begin_offset() && offset + n <= end_);
  const size_t cap = capacity_;
  size_t copied = 0;
  while (copied < n) {
    size_t slot = static_cast<size_t>((offset + copied) % cap);
    size_t run = std::min(n - copied, cap - slot);
    out.append(buffer_.data() + slot, run);
    copied += run;
  }
}

}  // namespace codexd::exec
