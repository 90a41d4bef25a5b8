// gRPC callback reactors whose work happens on the core io thread. Every reaction (cancel,
// done, write-done) hops to the core thread, so a call's state is only ever touched there.
// A Slot lets late completions find out that the call is gone.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>

#include "daemon/server/server_context.h"
#include "daemon/server/status_mapping.h"

namespace codexd::server {

class CoreUnaryReactor : public grpc::ServerUnaryReactor {
 public:
  struct Slot {
    CoreUnaryReactor* reactor = nullptr;
  };

  explicit CoreUnaryReactor(const CoreContext& core) : core_(core), slot_(std::make_shared<Slot>(Slot{this})) {}

  // Call Finish once; later calls are ignored. Core thread (or before any core work was posted).
  void finish(const grpc::Status& status) {
    if (finished_) return;
    finished_ = true;
    Finish(status);
  }
  void finish(const Status& status) { finish(to_grpc(status)); }
  std::shared_ptr<Slot> slot() const { return slot_; }
  // Runs on the core thread when the client cancels or disconnects before the answer.
  void set_on_cancel(std::function<void()> fn) { on_cancel_ = std::move(fn); }

  void OnCancel() override {
    on_core(core_, [slot = slot_] {
      if (!slot->reactor || slot->reactor->finished_) return;
      if (slot->reactor->on_cancel_) slot->reactor->on_cancel_();
      if (slot->reactor) slot->reactor->finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away"));
    });
  }
  void OnDone() override {
    on_core(core_, [this] {
      slot_->reactor = nullptr;
      delete this;
    });
  }

 private:
  const CoreContext& core_;
  std::shared_ptr<Slot> slot_;
  std::function<void()> on_cancel_;
  bool finished_ = false;
};

// Every unary RPC starts here: its reactor, and the caller from the connection's credentials.
// A connection without recorded credentials gets PERMISSION_DENIED at once (caller empty).
struct UnaryCall {
  CoreUnaryReactor* reactor;
  std::optional<orchestrator::Caller> caller;
};

inline UnaryCall begin_unary(const CoreContext& core, grpc::CallbackServerContext* ctx) {
  UnaryCall call{new CoreUnaryReactor(core), caller_of(core, ctx)};
  if (!call.caller) {
    call.reactor->finish(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "connection has no recorded peer credentials"));
  }
  return call;
}

}  // namespace codexd::server
