// codexd.v1.Exec over the gRPC callback API: no RPC holds a thread while it waits.
#pragma once

#include <sys/types.h>

#include <functional>

#include "codexd/v1/exec.grpc.pb.h"
#include "daemon/config/config.h"
#include "daemon/exec/exec_engine.h"
#include "daemon/orchestrator/command_runner.h"
#include "daemon/orchestrator/exec_supervisor.h"
#include "daemon/server/raw_unary.h"
#include "daemon/server/server_context.h"

namespace codexd::server {

struct ExecDeps {
  const config::Config* config = nullptr;         // request limits
  exec::ExecEngine* engine = nullptr;             // the sessions
  orchestrator::CommandRunner* runner = nullptr;  // ExecCommand, RunCommand
  std::function<bool(uid_t)> may_run_commands;    // user mode: only the daemon's own uid (and root)
  const orchestrator::ExecSupervisor* supervisor = nullptr;  // GetTrace; null: no traces
};

class ExecService final : public v1::Exec::CallbackService {
 public:
  ExecService(const CoreContext& core, ExecDeps deps) : core_(core), deps_(std::move(deps)) {
    MarkMethodRawCallback(raw_method_index(v1::Exec::service_full_name(), "ExecCommand"), raw_unary_handler(this, &ExecService::ExecCommand));
    MarkMethodRawCallback(raw_method_index(v1::Exec::service_full_name(), "WriteStdin"), raw_unary_handler(this, &ExecService::WriteStdin));
    MarkMethodRawCallback(raw_method_index(v1::Exec::service_full_name(), "Poll"), raw_unary_handler(this, &ExecService::Poll));
    MarkMethodRawCallback(raw_method_index(v1::Exec::service_full_name(), "Cancel"), raw_unary_handler(this, &ExecService::Cancel));
    MarkMethodRawCallback(raw_method_index(v1::Exec::service_full_name(), "ListSessions"), raw_unary_handler(this, &ExecService::ListSessions));
    MarkMethodRawCallback(raw_method_index(v1::Exec::service_full_name(), "RunCommand"), raw_unary_handler(this, &ExecService::RunCommand));
    MarkMethodRawCallback(raw_method_index(v1::Exec::service_full_name(), "SendInput"), raw_unary_handler(this, &ExecService::SendInput));
    MarkMethodRawCallback(raw_method_index(v1::Exec::service_full_name(), "ResizeTerminal"), raw_unary_handler(this, &ExecService::ResizeTerminal));
    MarkMethodRawCallback(raw_method_index(v1::Exec::service_full_name(), "GetTrace"), raw_unary_handler(this, &ExecService::GetTrace));
  }

  grpc::ServerUnaryReactor* ExecCommand(grpc::CallbackServerContext* ctx, const v1::ExecCommandRequest* request,
                                        v1::ExecResult* response) override;
  grpc::ServerUnaryReactor* WriteStdin(grpc::CallbackServerContext* ctx, const v1::WriteStdinRequest* request,
                                       v1::ExecResult* response) override;
  grpc::ServerUnaryReactor* Poll(grpc::CallbackServerContext* ctx, const v1::PollRequest* request,
                                 v1::ExecResult* response) override;
  grpc::ServerUnaryReactor* Cancel(grpc::CallbackServerContext* ctx, const v1::CancelRequest* request,
                                   v1::CancelResponse* response) override;
  grpc::ServerWriteReactor<v1::OutputEvent>* Attach(grpc::CallbackServerContext* ctx,
                                                    const v1::AttachRequest* request) override;
  grpc::ServerUnaryReactor* ListSessions(grpc::CallbackServerContext* ctx, const v1::ListSessionsRequest* request,
                                         v1::ListSessionsResponse* response) override;
  grpc::ServerUnaryReactor* RunCommand(grpc::CallbackServerContext* ctx, const v1::RunCommandRequest* request,
                                       v1::RunCommandResponse* response) override;
  grpc::ServerUnaryReactor* SendInput(grpc::CallbackServerContext* ctx, const v1::SendInputRequest* request,
                                      v1::SendInputResponse* response) override;
  grpc::ServerUnaryReactor* ResizeTerminal(grpc::CallbackServerContext* ctx, const v1::ResizeTerminalRequest* request,
                                           v1::ResizeTerminalResponse* response) override;
  grpc::ServerUnaryReactor* GetTrace(grpc::CallbackServerContext* ctx, const v1::GetTraceRequest* request,
                                     v1::GetTraceResponse* response) override;

 private:
  const CoreContext& core_;
  ExecDeps deps_;
};

}  // namespace codexd::server
