// Output retained between two polls of a session: the first half of the budget keeps the
// oldest bytes, the second half the newest, and the middle is dropped (Codex's
// HeadTailBuffer, 1 MiB per session).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace codexd::exec {

class HeadTailBuffer {
 public:
  static constexpr size_t kDefaultMaxBytes = 1024 * 1024;

  explicit HeadTailBuffer(size_t max_bytes = kDefaultMaxBytes);

  void push(std::string_view chunk);
  // Head then tail, without any marker; resets the buffer (and the omitted count).
  std::string drain();
  // Head, "\n... N bytes omitted ...\n" when bytes were dropped, tail. Does not reset.
  std::string to_string_with_omission_marker() const;

  size_t retained_bytes() const { return head_.size() + tail_.size(); }
  size_t omitted_bytes() const { return omitted_; }
  bool empty() const { return head_.empty() && tail_.empty(); }
  size_t head_budget() const { return head_budget_; }
  size_t tail_budget() const { return tail_budget_; }

 private:
  size_t head_budget_;
  size_t tail_budget_;
  std::string head_;
  std::string tail_;  // kept as one contiguous string; trimmed from the front when over budget
  size_t omitted_ = 0;
};

}  // namespace codexd::exec
