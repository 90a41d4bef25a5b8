// gRPC callback reactors whose work happens on the core io thread. Every reaction (cancel,
// done, write-done) hops to the core thread, so a call's state is only ever touched there.
// A Slot lets late completions find out that the call is gone.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <utility>

#include "daemon/server/server_context.h"
#include "daemon/server/status_mapping.h"

namespace codexd::server {

// The raw unary call (raw_unary.h) on whose behalf a typed method runs on this thread: the
// reactor begin_unary() makes takes its hooks (serialize the response before Finish, free the
// messages after OnDone).
struct RawUnaryBinding {
  std::function<void(const grpc::Status&)> before_finish;
  std::function<void()> after_done;

  static RawUnaryBinding*& current() {
    thread_local RawUnaryBinding* binding = nullptr;
    return binding;
  }
  // Makes `binding` current for the typed method's call.
  class Scope {
   public:
    explicit Scope(RawUnaryBinding* binding) : previous_(current()) { current() = binding; }
    ~Scope() { current() = previous_; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    RawUnaryBinding* previous_;
  };
};

class CoreUnaryReactor : public grpc::ServerUnaryReactor {
 public:
  struct Slot {
    CoreUnaryReactor* reactor = nullptr;
  };

  explicit CoreUnaryReactor(const CoreContext& core) : core_(core), slot_(std::make_shared<Slot>(Slot{this})) {
    if (RawUnaryBinding* raw = std::exchange(RawUnaryBinding::current(), nullptr)) {
      before_finish_ = std::move(raw->before_finish);
      after_done_ = std::move(raw->after_done);
    }
  }

  // Call Finish once; later calls are ignored. Core thread (or before any core work was posted).
  void finish(const grpc::Status& status) {
    if (finished_) return;
    finished_ = true;
    if (before_finish_) before_finish_(status);
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
      std::function<void()> after_done = std::move(after_done_);
      delete this;
      if (after_done) after_done();
    });
  }

 private:
  const CoreContext& core_;
  std::shared_ptr<Slot> slot_;
  std::function<void()> on_cancel_;
  std::function<void(const grpc::Status&)> before_finish_;  // a raw call's (raw_unary.h)
  std::function<void()> after_done_;
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
