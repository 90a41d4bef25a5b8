#include "client/approvals_feed.h"

#include <unistd.h>

#include <algorithm>
#include <exception>

#include "client/approvals_format.h"

namespace codexd::client {
namespace {

constexpr std::chrono::milliseconds kFirstRetry{250};
constexpr std::chrono::milliseconds kLongestRetry{4000};

std::string retry_text(std::chrono::milliseconds delay) {
  if (delay < std::chrono::seconds(1)) return "retrying";
  return "retrying in " + format_duration(delay.count());
}

}  // namespace

ApprovalsFeed::ApprovalsFeed(const std::shared_ptr<grpc::Channel>& channel, ClientOptions options, int wake_fd)
    : stub_(v1::Approvals::NewStub(channel)), options_(std::move(options)), wake_fd_(wake_fd) {
  thread_ = std::thread([this] { run(); });
}

ApprovalsFeed::~ApprovalsFeed() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    if (active_) active_->TryCancel();
  }
  stop_cv_.notify_all();
  thread_.join();
}

std::vector<FeedUpdate> ApprovalsFeed::take() {
  std::lock_guard lock(mutex_);
  return std::exchange(queue_, {});
}

void ApprovalsFeed::push(FeedUpdate update) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(update));
  }
  const char feed_byte = 0;
  (void)!::write(wake_fd_, &feed_byte, 1);  // non-blocking: a full pipe already wakes the loop
}

void ApprovalsFeed::run() noexcept {
  try {
    auto delay = kFirstRetry;
    for (;;) {
      auto [status, delivered] = follow_one_stream();
      if (delivered) delay = kFirstRetry;
      {
        std::lock_guard lock(mutex_);
        if (stopping_) return;
      }
      FeedUpdate lost{FeedUpdate::Kind::kStreamLost, {}, {}};
      lost.problem = retry_text(delay) + ": " + (status.ok() ? std::string("codexd ended the stream") : rpc_error_text(status));
      push(std::move(lost));
      if (!wait_before_retry(delay)) return;
      delay = std::min(delay * 2, kLongestRetry);
    }
  } catch (const std::exception& e) {  // nothing may escape the thread: say it, and stop
    push({FeedUpdate::Kind::kStreamLost, {}, std::string("stopped following approvals: ") + e.what()});
  } catch (...) {
    push({FeedUpdate::Kind::kStreamLost, {}, "stopped following approvals after an unknown error"});
  }
}

std::pair<grpc::Status, bool> ApprovalsFeed::follow_one_stream() {
  grpc::ClientContext context;
  prepare(context, options_);
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return {grpc::Status::CANCELLED, false};
    active_ = &context;  // a cancel before the call starts cancels it as it starts
  }
  auto reader = stub_->WatchApprovals(&context, v1::WatchApprovalsRequest());
  bool delivered = false;
  v1::ApprovalEvent event;
  while (reader->Read(&event)) {
    if (!delivered) push({FeedUpdate::Kind::kStreamStarted, {}, {}});
    delivered = true;
    push({FeedUpdate::Kind::kEvent, std::move(event), {}});
    event.Clear();
  }
  grpc::Status status = reader->Finish();
  std::lock_guard lock(mutex_);
  active_ = nullptr;
  return {status, delivered};
}

bool ApprovalsFeed::wait_before_retry(std::chrono::milliseconds delay) {
  std::unique_lock lock(mutex_);
  return !stop_cv_.wait_for(lock, delay, [this] { return stopping_; });
}

}  // namespace codexd::client
