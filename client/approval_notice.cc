#include "client/approval_notice.h"

#include <unistd.h>

#include <cstdio>

namespace codexd::client {
namespace {

std::string how_to_answer(const std::string& id) {
  return "answer with `codexctl approve " + id + "` or `codexctl deny " + id + "`";
}

}  // namespace

ApprovalNotice::ApprovalNotice(const ClientOptions& options, const std::shared_ptr<grpc::Channel>& channel,
                               std::string call_id)
    : stub_(v1::Approvals::NewStub(channel)), call_id_(std::move(call_id)), live_(::isatty(STDERR_FILENO) == 1) {
  prepare(context_, options);
  watcher_ = std::thread([this] { watch(); });
  if (live_) ticker_ = std::thread([this] { refresh_live_line(); });
}

ApprovalNotice::~ApprovalNotice() {
  {
    std::unique_lock lock(mutex_);
    // The call was answered; the answer's event travels on the watch stream and may come a
    // moment after the reply: wait for it (briefly) so that the resolution is always said.
    wake_.wait_for(lock, std::chrono::seconds(2), [this] { return waiting_for_.empty() || stream_ended_; });
    stopping_ = true;
    if (live_ && !waiting_for_.empty()) std::fputs("\r\033[K", stderr);  // the command's output follows
    waiting_for_.clear();
  }
  wake_.notify_all();
  context_.TryCancel();
  watcher_.join();
  if (ticker_.joinable()) ticker_.join();
}

void ApprovalNotice::watch() {
  auto reader = stub_->WatchApprovals(&context_, v1::WatchApprovalsRequest());
  v1::ApprovalEvent event;
  while (reader->Read(&event)) {
    std::lock_guard lock(mutex_);
    if (stopping_) break;
    if (event.has_added() && event.added().call_id() == call_id_) {
      waiting_for_ = event.added().approval_id();
      since_ = std::chrono::steady_clock::now();
      wake_.notify_all();  // the clock starts
      if (live_) {
        print_live_line();
      } else {
        std::fprintf(stderr, "codexctl: waiting for approval %s; %s\n", waiting_for_.c_str(),
                     how_to_answer(waiting_for_).c_str());
      }
    } else if (event.has_resolved() && event.resolved().approval_id() == waiting_for_) {
      if (live_) std::fputs("\r\033[K", stderr);
      std::fprintf(stderr, "codexctl: %s: %s\n", waiting_for_.c_str(),
                   v1::ReviewDecision_Name(event.resolved().decision()).c_str());
      waiting_for_.clear();
      wake_.notify_all();
    }
  }
  reader->Finish();
  std::lock_guard lock(mutex_);
  stream_ended_ = true;
  wake_.notify_all();
}

void ApprovalNotice::print_live_line() {
  const auto waited = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - since_);
  std::fprintf(stderr, "\r\033[Kcodexctl: waiting for approval %s (%llds); %s", waiting_for_.c_str(),
               static_cast<long long>(waited.count()), how_to_answer(waiting_for_).c_str());
  std::fflush(stderr);
}

// The live line's clock: redrawn at each whole second waited while a request is on it.
void ApprovalNotice::refresh_live_line() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (waiting_for_.empty()) {
      wake_.wait(lock);
      continue;
    }
    const auto waited = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - since_);
    const std::string on_line = waiting_for_;
    wake_.wait_until(lock, since_ + waited + std::chrono::seconds(1));
    if (!stopping_ && waiting_for_ == on_line) print_live_line();
  }
}

}  // namespace codexd::client
