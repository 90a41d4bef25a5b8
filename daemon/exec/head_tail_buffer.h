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
  // Only into the head: returns how many leading bytes of `chunk` it took (a caller that
  // keeps the newest bytes elsewhere builds the tail from there, see Session).
  size_t push_head(std::string_view chunk);
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
  // The newest bytes. Grows to tail_budget_, then wraps: a new byte replaces the oldest at
  // tail_begin_, so a full tail costs one copy per byte (trimming its front moved the whole
  // tail for every chunk).
  std::string tail_;
  size_t tail_begin_ = 0;  // index of the oldest tail byte (0 until the tail is full)
  size_t omitted_ = 0;

  void append_tail(std::string& out) const;
};

}  // namespace codexd::exec
