#include "daemon/server/attach_reactor.h"

#include "daemon/server/status_mapping.h"

namespace codexd::server {
namespace {
constexpr size_t kMaxChunkBytes = 256 * 1024;  // large messages stream fastest (design notes)
}

struct AttachReactor::State {
  AttachReactor* reactor;  // null once OnDone ran
  std::optional<orchestrator::Caller> caller;
  v1::AttachRequest request;
  std::shared_ptr<exec::Session> session;
  exec::Session::WatcherId watcher = 0;
  v1::OutputEvent message;
  bool writing = false;
  bool finishing = false;
  bool exit_sent = false;
  bool waiting_for_activity = false;
  // The client cancelled. A write in flight may still complete with ok=true after OnCancel was
  // handled (both hop to the core thread, in whatever order gRPC raised them): that write's
  // completion must then finish the call, or it would wait for output that may never come.
  bool cancelled = false;
};

AttachReactor::AttachReactor(const CoreContext& core, exec::ExecEngine& engine, std::optional<orchestrator::Caller> caller,
                             v1::AttachRequest request)
    : core_(core), engine_(engine), state_(std::make_shared<State>()) {
  state_->reactor = this;
  state_->caller = std::move(caller);
  state_->request = std::move(request);
  if (core_.streams) ++core_.streams->attach;
  on_core(core_, [this] { start(); });
}

void AttachReactor::start() {
  if (!state_->caller) {
    finish(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "connection has no recorded peer credentials"));
    return;
  }
  if (state_->request.session_id() <= 0) {
    finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "`session_id` is required"));
    return;
  }
  auto found = engine_.find(exec::Requester{state_->caller->uid, state_->caller->is_admin}, state_->request.session_id());
  if (!found.ok()) {
    finish(to_grpc(found.status()));
    return;
  }
  state_->session = *found;
  uint64_t from = state_->request.has_from_offset() ? state_->request.from_offset() : state_->session->oldest_retained_offset();
  if (from > state_->session->stream_offset()) {
    finish(grpc::Status(grpc::StatusCode::OUT_OF_RANGE,
                        "`from_offset` " + std::to_string(from) + " is beyond the end of the output (" +
                            std::to_string(state_->session->stream_offset()) + " bytes so far)"));
    return;
  }
  state_->watcher = state_->session->add_watcher(from, state_->request.lossless());
  pump();
}

void AttachReactor::pump() {
  State& s = *state_;
  if (s.writing || s.finishing || !s.session) return;
  // The output event's bytes buffer is kept from message to message: its capacity is reused
  // (gap and exit events, once each at most, switch the oneof away and back).
  exec::WatchStep step =
      s.session->next_for_watcher(s.watcher, kMaxChunkBytes, *s.message.mutable_output()->mutable_data());
  switch (step.kind) {
    case exec::WatchStep::Kind::kNothingYet: {
      if (s.waiting_for_activity) return;
      s.waiting_for_activity = true;
      std::weak_ptr<State> weak = state_;
      s.session->notify_on_activity([weak] {
        auto st = weak.lock();
        if (!st || !st->reactor) return;
        st->waiting_for_activity = false;
        st->reactor->pump();
      });
      return;
    }
    case exec::WatchStep::Kind::kGap:
      s.message.mutable_gap()->set_from_offset(step.from);
      s.message.mutable_gap()->set_to_offset(step.to);
      break;
    case exec::WatchStep::Kind::kData:
      s.message.mutable_output()->set_offset(step.offset);
      break;
    case exec::WatchStep::Kind::kExit:
      s.message.mutable_exit()->set_exit_code(step.exit.exit_code);
      if (step.exit.signal) s.message.mutable_exit()->set_signal(*step.exit.signal);
      s.message.mutable_exit()->set_final_offset(step.final_offset);
      s.exit_sent = true;
      break;
  }
  s.writing = true;
  StartWrite(&s.message);
}

void AttachReactor::OnWriteDone(bool ok) {
  on_core(core_, [state = state_, ok] {
    if (!state->reactor) return;
    state->writing = false;
    if (!ok || state->cancelled) {
      state->reactor->finish(grpc::Status(grpc::StatusCode::CANCELLED, "the watcher went away"));
      return;
    }
    if (state->exit_sent) {
      state->reactor->finish(grpc::Status::OK);
      return;
    }
    state->reactor->pump();
  });
}

void AttachReactor::OnCancel() {
  on_core(core_, [state = state_] {
    if (!state->reactor) return;
    state->cancelled = true;
    // A write in flight finishes the call when it completes (OnWriteDone).
    if (!state->writing) state->reactor->finish(grpc::Status(grpc::StatusCode::CANCELLED, "the watcher went away"));
  });
}

void AttachReactor::finish(const grpc::Status& status) {
  State& s = *state_;
  if (s.finishing) return;
  s.finishing = true;
  if (s.session && s.watcher) s.session->remove_watcher(s.watcher);
  Finish(status);
}

void AttachReactor::OnDone() {
  on_core(core_, [this] {
    state_->reactor = nullptr;
    if (state_->session && state_->watcher && !state_->finishing) state_->session->remove_watcher(state_->watcher);
    if (core_.streams) --core_.streams->attach;
    delete this;
  });
}

}  // namespace codexd::server
