#include "daemon/exec/head_tail_buffer.h"

#include <algorithm>

namespace codexd::exec {

HeadTailBuffer::HeadTailBuffer(size_t max_bytes) : head_budget_(max_bytes / 2), tail_budget_(max_bytes - max_bytes / 2) {}

void HeadTailBuffer::push(std::string_view chunk) {
  if (head_.size() < head_budget_) {
    size_t take = std::min(head_budget_ - head_.size(), chunk.size());
    head_.append(chunk.substr(0, take));
    chunk.remove_prefix(take);
  }
  if (chunk.empty()) return;
  if (chunk.size() >= tail_budget_) {
    // The chunk alone fills the tail: keep only its last tail_budget bytes.
    omitted_ += tail_.size() + (chunk.size() - tail_budget_);
    tail_.assign(chunk.substr(chunk.size() - tail_budget_));
    return;
  }
  tail_.append(chunk);
  if (tail_.size() > tail_budget_) {
    size_t excess = tail_.size() - tail_budget_;
    omitted_ += excess;
    tail_.erase(0, excess);
  }
}

std::string HeadTailBuffer::drain() {
  std::string out;
  out.reserve(head_.size() + tail_.size());
  out.append(head_);
  out.append(tail_);
  head_.clear();
  tail_.clear();
  omitted_ = 0;
  return out;
}

std::string HeadTailBuffer::to_string_with_omission_marker() const {
  std::string out = head_;
  if (omitted_ > 0) out += "\n... " + std::to_string(omitted_) + " bytes omitted ...\n";
  out += tail_;
  return out;
}

}  // namespace codexd::exec
