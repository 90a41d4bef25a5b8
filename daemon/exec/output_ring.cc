#include "daemon/exec/output_ring.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace codexd::exec {

OutputRing::OutputRing(size_t capacity, size_t write_slack)
    : capacity_(std::max<size_t>(capacity, 1)), slots_(capacity_ + write_slack) {}

void OutputRing::grow_to_hold(size_t bytes) {
  if (buffer_.capacity() >= bytes) return;
  size_t want = std::max<size_t>({bytes, buffer_.capacity() * 2, 4096});
  buffer_.reserve(std::min(want, slots_));
}

void OutputRing::append(std::string_view data) {
  const size_t slots = slots_;
  if (buffer_.size() < slots) {  // still growing: linear, index == offset
    const size_t take = std::min(slots - buffer_.size(), data.size());
    grow_to_hold(buffer_.size() + take);
    buffer_.insert(buffer_.end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(take));
    end_ += take;
    size_ = std::min(capacity_, size_ + take);
    data.remove_prefix(take);
    if (data.empty()) return;
  }
  if (data.size() >= capacity_) {
    // Only the last `capacity_` bytes survive; lay them out so that slot = offset % slots holds.
    end_ += data.size();
    data.remove_prefix(data.size() - capacity_);
    size_ = capacity_;
    const uint64_t first = end_ - capacity_;
    for (size_t i = 0; i < capacity_;) {
      size_t slot = static_cast<size_t>((first + i) % slots);
      size_t run = std::min(capacity_ - i, slots - slot);
      std::memcpy(buffer_.data() + slot, data.data() + i, run);
      i += run;
    }
    return;
  }
  size_t written = 0;
  while (written < data.size()) {
    size_t slot = static_cast<size_t>((end_ + written) % slots);
    size_t run = std::min(data.size() - written, slots - slot);
    std::memcpy(buffer_.data() + slot, data.data() + written, run);
    written += run;
  }
  end_ += data.size();
  size_ = std::min(capacity_, size_ + data.size());
}

std::array<std::span<char>, 2> OutputRing::prepare(size_t max_bytes) {
  const size_t n = std::min(max_bytes, free_bytes());
  if (buffer_.size() < slots_) {
    // Growing: the buffer holds exactly [0, end); make room for n more (trimmed at commit).
    const size_t target = static_cast<size_t>(std::min<uint64_t>(end_ + n, slots_));
    grow_to_hold(target);
    buffer_.resize(target);
    prepared_growth_ = true;
  }
  const size_t slot = static_cast<size_t>(end_ % slots_);
  const size_t first = std::min(n, slots_ - slot);
  return {std::span<char>(buffer_.data() + slot, first), std::span<char>(buffer_.data(), n - first)};
}

void OutputRing::commit(size_t n) {
  end_ += n;
  size_ = std::min(capacity_, size_ + n);
  if (prepared_growth_) {
    prepared_growth_ = false;
    buffer_.resize(static_cast<size_t>(std::min<uint64_t>(end_, slots_)));
  }
}

void OutputRing::skip_to(uint64_t offset) {
  if (offset <= end_) return;
  // Wrapping layout from here on (slot = offset % slots), whatever was held before.
  buffer_.assign(slots_, '\0');
  buffer_.shrink_to_fit();
  end_ = offset;
  size_ = 0;
}

std::array<std::span<const char>, 2> OutputRing::spans(uint64_t offset, size_t n) const {
  assert(offset >= begin_offset() && offset + n <= end_);
  const size_t slot = static_cast<size_t>(offset % slots_);
  const size_t first = std::min(n, slots_ - slot);
  return {std::span<const char>(buffer_.data() + slot, first), std::span<const char>(buffer_.data(), n - first)};
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
  for (std::span<const char> part : spans(offset, n)) {
    if (!part.empty()) std::memcpy(dest, part.data(), part.size());
    dest += part.size();
  }
}

void OutputRing::append_to(uint64_t offset, size_t n, std::string& out) const {
  for (std::span<const char> part : spans(offset, n)) out.append(part.data(), part.size());
}

}  // namespace codexd::exec
