// Exec.Attach: streams a session's output from an offset to one watcher. Pull-based: after
// each write completes, the next chunk is read from the session's retention ring, so a slow
// watcher never queues memory; lossless watchers instead hold the session's reader back.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>

#include "codexd/v1/exec.pb.h"
#include "daemon/exec/exec_engine.h"
#include "daemon/exec/session.h"
#include "daemon/server/server_context.h"

namespace codexd::server {

class AttachReactor : public grpc::ServerWriteReactor<v1::OutputEvent> {
 public:
  AttachReactor(const CoreContext& core, exec::ExecEngine& engine, std::optional<orchestrator::Caller> caller,
                v1::AttachRequest request);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  struct State;
  void start();  // core thread
  void pump();   // core thread
  void finish(const grpc::Status& status);

  const CoreContext& core_;
  exec::ExecEngine& engine_;
  std::shared_ptr<State> state_;
};

}  // namespace codexd::server
