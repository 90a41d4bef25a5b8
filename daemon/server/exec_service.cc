#include "daemon/server/exec_service.h"

#include "base/utf8.h"
#include "daemon/exec/truncation.h"
#include "daemon/exec/yield_clamps.h"
#include "daemon/server/attach_reactor.h"
#include "daemon/server/core_reactors.h"
#include "daemon/server/proto_convert.h"
#include "daemon/server/request_validation.h"

namespace codexd::server {
namespace {

exec::Requester requester_of(const orchestrator::Caller& caller) { return exec::Requester{caller.uid, caller.is_admin}; }

void fill_trace(int session_id, const orchestrator::ExecTrace& trace, v1::GetTraceResponse* out) {
  out->set_session_id(session_id);
  out->set_mode(trace.mode);
  out->set_dropped(trace.dropped);
  out->set_ended(trace.ended);
  out->set_agent_id(trace.agent_id);
  out->set_owner_uid(trace.uid);
  for (const orchestrator::TracedExec& traced : trace.execs) {
    const orchestrator::ExecAuditRecord& r = traced.record;
    v1::TracedExec* e = out->add_execs();
    e->set_at_unix_ms(traced.at_unix_ms);
    e->set_pid(r.pid);
    e->set_parent_pid(r.parent_pid);
    e->set_traced_parent_pid(r.traced_parent_pid);
    e->set_path(utf8_lossy(r.path));
    for (const std::string& word : r.argv) e->add_argv(utf8_lossy(word));
    e->set_command(r.command);
    e->set_decision(r.decision);
    e->set_outcome(r.outcome);
    e->set_rule(utf8_lossy(r.rule));
  }
}

// The command, once validated, is the plan's alone: the parsed request (which the raw handler
// keeps until the call ends, maybe long after, waiting for a reviewer) lets its copy go.
// (clear_argv and clear_cmd would keep the strings' memory for reuse: swapped out, it is freed.)
template <typename Request>
void release_command(Request& request) {
  google::protobuf::RepeatedPtrField<std::string>().Swap(request.mutable_argv());
  std::string().swap(*request.mutable_cmd());
}

uint32_t max_tokens(bool has, uint32_t value) { return has ? value : exec::kDefaultMaxOutputTokens; }

// The engine's answer to a waiting WriteStdin or Poll, for the call if it is still there.
exec::ExecEngine::Done deliver_to(std::shared_ptr<CoreUnaryReactor::Slot> slot, v1::ExecResult* response) {
  return [slot = std::move(slot), response](Result<exec::UnifiedOutcome> r) {
    if (!slot->reactor) return;
    if (!r.ok()) {
      slot->reactor->finish(r.status());
      return;
    }
    fill_exec_result(*r, response);
    slot->reactor->finish(grpc::Status::OK);
  };
}

// A call that gives up stops waiting; the session keeps its output for the next caller.
void abandon_on_cancel(exec::ExecEngine& engine, const std::shared_ptr<CoreUnaryReactor::Slot>& slot,
                       const std::optional<exec::WaitTicket>& ticket) {
  if (ticket && slot->reactor) slot->reactor->set_on_cancel([&engine, t = *ticket] { engine.abandon(t); });
}

}  // namespace

// ExecCommand and RunCommand: only callers that may run commands; the validated request goes
// through the CommandRunner on the core thread, and `fill` writes the response.
template <typename Response>
grpc::ServerUnaryReactor* start_command(const CoreContext& core, const ExecDeps& deps, grpc::CallbackServerContext* ctx,
                                        Response* response,
                                        const std::function<Result<orchestrator::ExecRequest>(const orchestrator::Caller&)>& validate,
                                        std::function<std::shared_ptr<orchestrator::CallHandle>(
                                            orchestrator::ExecRequest, orchestrator::CommandRunner::Done)>
                                            start,
                                        void (*fill)(const orchestrator::CommandResult&, Response*)) {
  auto [reactor, caller] = begin_unary(core, ctx);
  if (!caller) return reactor;
  if (!deps.may_run_commands(caller->uid)) {
    reactor->finish(PermissionDenied("this codexd runs commands as uid " + std::to_string(::geteuid()) +
                                     " (user mode); uid " + std::to_string(caller->uid) + " may not use it"));
    return reactor;
  }
  auto validated = validate(*caller);
  if (!validated.ok()) {
    reactor->finish(validated.status());
    return reactor;
  }
  validated->caller = *caller;
  on_core(core, [reactor = reactor, response, fill, start = std::move(start), req = std::move(validated).value()]() mutable {
    auto slot = reactor->slot();
    auto handle = start(std::move(req), [slot, response, fill](orchestrator::CommandResult r) {
      if (!slot->reactor) return;
      if (!r.error.ok()) {
        slot->reactor->finish(r.error);
        return;
      }
      fill(r, response);
      slot->reactor->finish(grpc::Status::OK);
    });
    if (slot->reactor) slot->reactor->set_on_cancel([handle] { handle->client_gone(); });
  });
  return reactor;
}

grpc::ServerUnaryReactor* ExecService::ExecCommand(grpc::CallbackServerContext* ctx, const v1::ExecCommandRequest* request,
                                                   v1::ExecResult* response) {
  const uint32_t yield = exec::clamp_exec_yield_ms(request->has_yield_time_ms() ? std::optional(request->yield_time_ms()) : std::nullopt);
  const uint32_t tokens = max_tokens(request->has_max_output_tokens(), request->max_output_tokens());
  return start_command<v1::ExecResult>(
      core_, deps_, ctx, response,
      [&](const orchestrator::Caller& c) {
        auto validated = validate_exec_command(*request, *deps_.config, c.agent_id);
        release_command(owned_request(request));
        return validated;
      },
      [this, yield, tokens](orchestrator::ExecRequest req, orchestrator::CommandRunner::Done done) {
        return deps_.runner->exec_command(std::move(req), yield, tokens, std::move(done));
      },
      &fill_exec_result);
}

grpc::ServerUnaryReactor* ExecService::RunCommand(grpc::CallbackServerContext* ctx, const v1::RunCommandRequest* request,
                                                  v1::RunCommandResponse* response) {
  return start_command<v1::RunCommandResponse>(
      core_, deps_, ctx, response,
      [&](const orchestrator::Caller& c) {
        auto validated = validate_run_command(*request, *deps_.config, c.agent_id);
        release_command(owned_request(request));
        return validated;
      },
      [this](orchestrator::ExecRequest req, orchestrator::CommandRunner::Done done) {
        return deps_.runner->run_command(std::move(req), std::move(done));
      },
      &fill_run_response);
}

grpc::ServerUnaryReactor* ExecService::WriteStdin(grpc::CallbackServerContext* ctx, const v1::WriteStdinRequest* request,
                                                  v1::ExecResult* response) {
  auto [reactor, caller] = begin_unary(core_, ctx);
  if (!caller) return reactor;
  if (Status st = validate_write_stdin(*request); !st.ok()) {
    reactor->finish(st);
    return reactor;
  }
  std::optional<uint32_t> yield = request->has_yield_time_ms() ? std::optional(request->yield_time_ms()) : std::nullopt;
  const uint32_t tokens = max_tokens(request->has_max_output_tokens(), request->max_output_tokens());
  on_core(core_, [this, reactor, response, requester = requester_of(*caller), id = request->session_id(),
                   chars = request->chars(), yield, tokens]() mutable {
    auto slot = reactor->slot();
    auto ticket = deps_.engine->write_stdin(requester, id, std::move(chars), yield, tokens, deliver_to(slot, response));
    abandon_on_cancel(*deps_.engine, slot, ticket);
  });
  return reactor;
}

grpc::ServerUnaryReactor* ExecService::Poll(grpc::CallbackServerContext* ctx, const v1::PollRequest* request,
                                            v1::ExecResult* response) {
  auto [reactor, caller] = begin_unary(core_, ctx);
  if (!caller) return reactor;
  if (Status st = validate_poll(*request); !st.ok()) {
    reactor->finish(st);
    return reactor;
  }
  const uint32_t tokens = max_tokens(request->has_max_output_tokens(), request->max_output_tokens());
  const std::optional<uint64_t> from_offset =
      request->has_from_offset() ? std::optional(request->from_offset()) : std::nullopt;
  on_core(core_, [this, reactor, response, requester = requester_of(*caller), id = request->session_id(),
                   yield = request->yield_time_ms(), tokens, from_offset] {
    auto slot = reactor->slot();
    auto ticket = deps_.engine->poll(requester, id, yield, tokens, deliver_to(slot, response), from_offset);
    abandon_on_cancel(*deps_.engine, slot, ticket);
  });
  return reactor;
}

grpc::ServerUnaryReactor* ExecService::Cancel(grpc::CallbackServerContext* ctx, const v1::CancelRequest* request,
                                              v1::CancelResponse* response) {
  auto [reactor, caller] = begin_unary(core_, ctx);
  if (!caller) return reactor;
  Result<CancelInput> input = validate_cancel(*request);
  if (!input.ok()) {
    reactor->finish(input.status());
    return reactor;
  }
  on_core(core_, [this, reactor, response, requester = requester_of(*caller), id = request->session_id(), input = *input] {
    auto r = deps_.engine->cancel(requester, id, input.mode, input.grace);
    if (!r.ok()) {
      reactor->finish(r.status());
      return;
    }
    response->set_was_running(*r);
    reactor->finish(grpc::Status::OK);
  });
  return reactor;
}

grpc::ServerUnaryReactor* ExecService::ListSessions(grpc::CallbackServerContext* ctx, const v1::ListSessionsRequest* request,
                                                    v1::ListSessionsResponse* response) {
  auto [reactor, caller] = begin_unary(core_, ctx);
  if (!caller) return reactor;
  if (request->all_users() && !caller->is_admin) {
    reactor->finish(PermissionDenied("`all_users` needs an admin uid (root or daemon.admin_uids)"));
    return reactor;
  }
  on_core(core_, [this, reactor, response, requester = requester_of(*caller), all = request->all_users()] {
    for (const auto& s : deps_.engine->list(requester, all)) fill_session_info(*s, response->add_sessions());
    reactor->finish(grpc::Status::OK);
  });
  return reactor;
}

grpc::ServerUnaryReactor* ExecService::GetTrace(grpc::CallbackServerContext* ctx, const v1::GetTraceRequest* request,
                                                v1::GetTraceResponse* response) {
  auto [reactor, caller] = begin_unary(core_, ctx);
  if (!caller) return reactor;
  if (Status st = validate_session_id(request->session_id()); !st.ok()) {
    reactor->finish(st);
    return reactor;
  }
  on_core(core_, [this, reactor, response, requester = requester_of(*caller), id = request->session_id()] {
    if (deps_.supervisor == nullptr) {
      reactor->finish(Unimplemented("exec supervision is not part of this daemon"));
      return;
    }
    Result<const orchestrator::ExecTrace*> trace = deps_.supervisor->trace(id, requester.uid, requester.is_admin);
    if (!trace.ok()) {
      reactor->finish(trace.status());
      return;
    }
    fill_trace(id, **trace, response);
    reactor->finish(grpc::Status::OK);
  });
  return reactor;
}

grpc::ServerUnaryReactor* ExecService::SendInput(grpc::CallbackServerContext* ctx, const v1::SendInputRequest* request,
                                                 v1::SendInputResponse*) {
  auto [reactor, caller] = begin_unary(core_, ctx);
  if (!caller) return reactor;
  if (Status st = validate_send_input(*request); !st.ok()) {
    reactor->finish(st);
    return reactor;
  }
  on_core(core_, [this, reactor, requester = requester_of(*caller), id = request->session_id(), data = request->data()]() mutable {
    reactor->finish(deps_.engine->send_input(requester, id, std::move(data)));
  });
  return reactor;
}

grpc::ServerUnaryReactor* ExecService::ResizeTerminal(grpc::CallbackServerContext* ctx,
                                                      const v1::ResizeTerminalRequest* request,
                                                      v1::ResizeTerminalResponse*) {
  auto [reactor, caller] = begin_unary(core_, ctx);
  if (!caller) return reactor;
  if (Status st = validate_resize_terminal(*request); !st.ok()) {
    reactor->finish(st);
    return reactor;
  }
  on_core(core_, [this, reactor, requester = requester_of(*caller), id = request->session_id(),
                   rows = static_cast<unsigned short>(request->rows()), cols = static_cast<unsigned short>(request->cols())] {
    reactor->finish(deps_.engine->resize(requester, id, rows, cols));
  });
  return reactor;
}

grpc::ServerWriteReactor<v1::OutputEvent>* ExecService::Attach(grpc::CallbackServerContext* ctx,
                                                              const v1::AttachRequest* request) {
  return new AttachReactor(core_, *deps_.engine, caller_of(core_, ctx), *request);
}

}  // namespace codexd::server
