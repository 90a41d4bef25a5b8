// codexd.v1.Sandbox: a command through the sandbox only (no policy, no approval), for
// debugging sandbox profiles. Admin callers only, and never without a sandbox.
#pragma once

#include "codexd/v1/sandbox.grpc.pb.h"
#include "daemon/server/server_context.h"

namespace codexd::server {

class SandboxService final : public v1::Sandbox::CallbackService {
 public:
  explicit SandboxService(const DaemonParts& parts) : parts_(parts) {}
  grpc::ServerUnaryReactor* RunSandboxed(grpc::CallbackServerContext* ctx, const v1::SandboxRunRequest* request,
                                         v1::RunCommandResponse* response) override;

 private:
  const DaemonParts& parts_;
};

}  // namespace codexd::server
