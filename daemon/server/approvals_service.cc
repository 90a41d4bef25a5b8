#include "daemon/server/approvals_service.h"

#include <deque>

#include "daemon/server/approval_pages.h"
#include "daemon/server/core_reactors.h"
#include "daemon/server/proto_convert.h"
#include "daemon/server/request_validation.h"

namespace codexd::server {
namespace {

// A reviewer's stream. Events are queued (one write in flight at a time); a reviewer that
// stops reading is dropped once its queue is long, rather than growing without bound.
class WatchReactor : public grpc::ServerWriteReactor<v1::ApprovalEvent> {
 public:
  static constexpr size_t kMaxQueued = 10'000;

  WatchReactor(const CoreContext& core, orchestrator::ApprovalBroker& broker, ApprovalEventProtos& protos,
               std::optional<orchestrator::Caller> caller)
      : core_(core), broker_(broker), protos_(protos) {
    if (core_.streams) ++core_.streams->approval_watch;
    on_core(core_, [this, caller] {
      if (!caller) {
        finish(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "connection has no recorded peer credentials"));
        return;
      }
      watching_ = true;
      watcher_ = broker_.watch(caller->uid, [this](const orchestrator::ApprovalEvent& event) { enqueue(event); });
    });
  }

  void OnWriteDone(bool ok) override {
    on_core(core_, [this, ok] {
      if (done_) return;
      writing_ = false;
      current_.reset();  // what other streams still hold stays; this one lets go
      if (!ok || cancelled_) {
        finish(grpc::Status(grpc::StatusCode::CANCELLED, "the reviewer went away"));
        return;
      }
      pump();
    });
  }
  void OnCancel() override {
    on_core(core_, [this] {
      cancelled_ = true;  // a write in flight finishes the call when it completes (OnWriteDone)
      if (!done_ && !writing_) finish(grpc::Status(grpc::StatusCode::CANCELLED, "the reviewer went away"));
    });
  }
  void OnDone() override {
    on_core(core_, [this] {
      done_ = true;
      stop_watching();
      if (core_.streams) --core_.streams->approval_watch;
      delete this;
    });
  }

 private:
  void enqueue(const orchestrator::ApprovalEvent& event) {
    if (finishing_) return;
    if (queue_.size() >= kMaxQueued) {
      finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "the reviewer is not reading its approval events"));
      return;
    }
    queue_.push_back(protos_.message_for(event));
    pump();
  }
  void pump() {
    if (writing_ || finishing_ || queue_.empty()) return;
    current_ = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    StartWrite(current_.get());
  }
  void stop_watching() {
    if (watching_) broker_.unwatch(watcher_);
    watching_ = false;
  }
  void finish(const grpc::Status& status) {
    if (finishing_) return;
    finishing_ = true;
    stop_watching();
    Finish(status);
  }

  const CoreContext& core_;
  orchestrator::ApprovalBroker& broker_;
  ApprovalEventProtos& protos_;
  orchestrator::ApprovalBroker::WatcherId watcher_ = 0;
  bool watching_ = false;
  std::deque<std::shared_ptr<const v1::ApprovalEvent>> queue_;
  std::shared_ptr<const v1::ApprovalEvent> current_;  // in flight
  bool writing_ = false;
  bool finishing_ = false;
  bool done_ = false;
  // OnCancel ran. A write in flight may still complete with ok=true after it (both hop to the
  // core thread in whatever order gRPC raised them); that completion then finishes the call.
  bool cancelled_ = false;
};

}  // namespace

grpc::ServerWriteReactor<v1::ApprovalEvent>* ApprovalsService::WatchApprovals(grpc::CallbackServerContext* ctx,
                                                                              const v1::WatchApprovalsRequest*) {
  return new WatchReactor(core_, broker_, protos_, caller_of(core_, ctx));
}

grpc::ServerUnaryReactor* ApprovalsService::ListApprovals(grpc::CallbackServerContext* ctx,
                                                          const v1::ListApprovalsRequest* request,
                                                          v1::ListApprovalsResponse* response) {
  auto [reactor, caller] = begin_unary(core_, ctx);
  if (!caller) return reactor;
  on_core(core_, [this, reactor, response, uid = caller->uid, token = request->page_token()] {
    reactor->finish(fill_approval_page(broker_.pending_refs_for(uid), token, response));
  });
  return reactor;
}

grpc::ServerUnaryReactor* ApprovalsService::ResolveApproval(grpc::CallbackServerContext* ctx,
                                                            const v1::ResolveApprovalRequest* request,
                                                            v1::ResolveApprovalResponse*) {
  auto [reactor, caller] = begin_unary(core_, ctx);
  if (!caller) return reactor;
  Result<orchestrator::ReviewDecision> decision = validate_resolve_approval(*request);
  if (!decision.ok()) {
    reactor->finish(decision.status());
    return reactor;
  }
  on_core(core_, [this, reactor, id = request->approval_id(), decision = *decision, uid = caller->uid,
                   agent = caller->agent_id, rationale = request->rationale()] {
    reactor->finish(broker_.resolve(id, decision, uid, rationale, agent));
  });
  return reactor;
}

}  // namespace codexd::server
