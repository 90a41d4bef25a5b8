#include "platform/posix/byte_pump.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "base/unique_fd.h"

namespace codexd::posix {

namespace {

bool would_block(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

// read(2)/write(2) through a userspace buffer: the portable fallback.
class CopyPump final : public BytePump {
 public:
  explicit CopyPump(size_t capacity) : buffer_(capacity) {}

  Result<PumpStep> fill(int source) override {
    if (end_ == buffer_.size() && begin_ > 0) compact();
    if (end_ == buffer_.size()) return PumpStep{0, true, false};
    for (;;) {
      ssize_t n = ::read(source, buffer_.data() + end_, buffer_.size() - end_);
      if (n > 0) {
        end_ += static_cast<size_t>(n);
        return PumpStep{static_cast<size_t>(n), false, false};
      }
      if (n == 0) return PumpStep{0, false, true};
      if (errno == EINTR) continue;
      if (would_block(errno)) return PumpStep{0, true, false};
      return ErrnoStatus("read", errno);
    }
  }

  Result<PumpStep> drain(int sink) override {
    for (;;) {
      ssize_t n = ::write(sink, buffer_.data() + begin_, end_ - begin_);
      if (n >= 0) {
        begin_ += static_cast<size_t>(n);
        if (begin_ == end_) begin_ = end_ = 0;
        return PumpStep{static_cast<size_t>(n), n == 0, false};
      }
      if (errno == EINTR) continue;
      if (would_block(errno)) return PumpStep{0, true, false};
      return ErrnoStatus("write", errno);
    }
  }

  size_t buffered() const override { return end_ - begin_; }
  size_t capacity() const override { return buffer_.size(); }
  const char* kind() const override { return "copy"; }

 private:
  void compact() {
    std::copy(buffer_.begin() + static_cast<long>(begin_), buffer_.begin() + static_cast<long>(end_), buffer_.begin());
    end_ -= begin_;
    begin_ = 0;
  }

  std::vector<char> buffer_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

#ifdef __linux__
// splice(2) source -> pipe -> sink: the kernel moves page references, no copy to userspace.
class SplicePump final : public BytePump {
 public:
  SplicePump(UniqueFd read_end, UniqueFd write_end, size_t capacity)
      : read_end_(std::move(read_end)), write_end_(std::move(write_end)), capacity_(capacity) {}

  Result<PumpStep> fill(int source) override {
    if (buffered_ >= capacity_) return PumpStep{0, true, false};
    return move(source, write_end_.get(), capacity_ - buffered_, true);
  }

  Result<PumpStep> drain(int sink) override { return move(read_end_.get(), sink, buffered_, false); }

  size_t buffered() const override { return buffered_; }
  size_t capacity() const override { return capacity_; }
  const char* kind() const override { return "splice"; }

 private:
  Result<PumpStep> move(int from, int to, size_t length, bool filling) {
    for (;;) {
      ssize_t n = ::splice(from, nullptr, to, nullptr, length, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0) {
        buffered_ = filling ? buffered_ + static_cast<size_t>(n) : buffered_ - static_cast<size_t>(n);
        return PumpStep{static_cast<size_t>(n), false, false};
      }
      if (n == 0) return PumpStep{0, !filling, filling};
      if (errno == EINTR) continue;
      if (would_block(errno)) return PumpStep{0, true, false};
      return ErrnoStatus("splice", errno);
    }
  }

  UniqueFd read_end_;
  UniqueFd write_end_;
  size_t capacity_;
  size_t buffered_ = 0;
};

Result<std::unique_ptr<BytePump>> make_splice_pump(size_t capacity) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return ErrnoStatus("pipe2", errno);
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  // A bigger pipe means fewer wake-ups; the kernel may refuse (pipe-user-pages limits), then
  // the default size (64 KiB) is what we get.
  int size = ::fcntl(write_end.get(), F_SETPIPE_SZ, static_cast<int>(capacity));
  if (size < 0) size = ::fcntl(write_end.get(), F_GETPIPE_SZ);
  if (size <= 0) return ErrnoStatus("fcntl(F_GETPIPE_SZ)", errno);
  return std::unique_ptr<BytePump>(
      std::make_unique<SplicePump>(std::move(read_end), std::move(write_end), static_cast<size_t>(size)));
}
#endif

}  // namespace

Result<std::unique_ptr<BytePump>> make_byte_pump(size_t capacity, PumpKind kind) {
#ifdef __linux__
  if (kind == PumpKind::kBest) {
    auto pump = make_splice_pump(capacity);
    if (pump.ok()) return pump;
  }
#endif
  (void)kind;
  return std::unique_ptr<BytePump>(std::make_unique<CopyPump>(capacity));
}

}  // namespace codexd::posix
