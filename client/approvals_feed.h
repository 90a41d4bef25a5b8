// The WatchApprovals stream of the live approvals view, followed on its own thread: each event
// is queued and one byte (0) is written to `wake_fd`, so the view's poll() loop wakes for it.
// When the stream ends (the daemon went away or restarted), it says so and connects again
// with backoff: 0.25 s, doubling to 4 s, back to 0.25 s once a stream delivered something.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "client/connection.h"
#include "codexd/v1/approvals.grpc.pb.h"

namespace codexd::client {

struct FeedUpdate {
  enum class Kind { kStreamStarted, kEvent, kStreamLost };
  Kind kind = Kind::kEvent;
  v1::ApprovalEvent event;  // kEvent
  std::string problem;      // kStreamLost: when the next try is, and why, in plain words
};

class ApprovalsFeed {
 public:
  ApprovalsFeed(const std::shared_ptr<grpc::Channel>& channel, ClientOptions options, int wake_fd);
  // Cancels the stream, stops retrying and joins the thread.
  ~ApprovalsFeed();
  ApprovalsFeed(const ApprovalsFeed&) = delete;
  ApprovalsFeed& operator=(const ApprovalsFeed&) = delete;

  // What arrived since the last call, in order.
  std::vector<FeedUpdate> take();

 private:
  void run() noexcept;
  // Follows one stream to its end: its final status, and whether it delivered anything.
  std::pair<grpc::Status, bool> follow_one_stream();
  bool wait_before_retry(std::chrono::milliseconds delay);  // false: stopping
  void push(FeedUpdate update);

  std::unique_ptr<v1::Approvals::Stub> stub_;
  ClientOptions options_;
  int wake_fd_;
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  grpc::ClientContext* active_ = nullptr;  // the current stream's, to cancel it
  std::vector<FeedUpdate> queue_;
  std::thread thread_;
};

}  // namespace codexd::client
