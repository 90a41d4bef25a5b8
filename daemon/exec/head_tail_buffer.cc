#include "daemon/exec/head_tail_buffer.h"

#include <algorithm>
#include <cstring>

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
    tail_begin_ = 0;
    return;
  }
  if (tail_.size() < tail_budget_) {  // still growing
    const size_t take = std::min(tail_budget_ - tail_.size(), chunk.size());
    if (tail_.capacity() < tail_.size() + take) {
      tail_.reserve(std::min(tail_budget_, std::max(tail_.size() + take, 2 * tail_.capacity())));
    }
    tail_.append(chunk.substr(0, take));
    chunk.remove_prefix(take);
  }
  omitted_ += chunk.size();  // each byte left replaces the oldest one
  while (!chunk.empty()) {
    const size_t run = std::min(chunk.size(), tail_budget_ - tail_begin_);
    std::memcpy(tail_.data() + tail_begin_, chunk.data(), run);
    tail_begin_ = (tail_begin_ + run) % tail_budget_;
    chunk.remove_prefix(run);
  }
}

size_t HeadTailBuffer::push_head(std::string_view chunk) {
  const size_t take = std::min(head_budget_ - std::min(head_budget_, head_.size()), chunk.size());
  head_.append(chunk.substr(0, take));
  return take;
}

void HeadTailBuffer::append_tail(std::string& out) const {
  out.append(tail_, tail_begin_, std::string::npos);
  out.append(tail_, 0, tail_begin_);
}

std::string HeadTailBuffer::drain() {
  std::string out;
  out.reserve(head_.size() + tail_.size());
  out.append(head_);
  append_tail(out);
  head_.clear();
  tail_.clear();
  tail_begin_ = 0;
  omitted_ = 0;
  return out;
}

std::string HeadTailBuffer::to_string_with_omission_marker() const {
  std::string out = head_;
  if (omitted_ > 0) out += "\n... " + std::to_string(omitted_) + " bytes omitted ...\n";
  append_tail(out);
  return out;
}

}  // namespace codexd::exec
