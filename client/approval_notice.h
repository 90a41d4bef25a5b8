// What `codexctl exec` says while its command waits for a reviewer that is not this terminal
// (--no-prompt, or no terminal to ask on): which approval, and how to answer it.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "client/connection.h"
#include "codexd/v1/approvals.grpc.pb.h"

namespace codexd::client {

// Watches the approvals of one call (`call_id`) for as long as it lives. Each request is
// announced on stderr once, with the commands that answer it, and its resolution too. When
// stderr is a terminal, the announcement is a live line with the time waited so far.
class ApprovalNotice {
 public:
  ApprovalNotice(const ClientOptions& options, const std::shared_ptr<grpc::Channel>& channel, std::string call_id);
  ~ApprovalNotice();
  ApprovalNotice(const ApprovalNotice&) = delete;
  ApprovalNotice& operator=(const ApprovalNotice&) = delete;

 private:
  void watch();
  void refresh_live_line();
  void print_live_line();  // under mutex_

  std::unique_ptr<v1::Approvals::Stub> stub_;
  std::string call_id_;
  bool live_;  // stderr is a terminal
  grpc::ClientContext context_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string waiting_for_;  // the approval on the live line, "" when none
  std::chrono::steady_clock::time_point since_;
  bool stopping_ = false;
  bool stream_ended_ = false;
  std::thread watcher_;
  std::thread ticker_;
};

}  // namespace codexd::client
