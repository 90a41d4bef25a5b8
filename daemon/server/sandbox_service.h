// codexd.v1.Sandbox: a command through the sandbox only (no policy, no approval), for
// debugging sandbox profiles. Admin callers only, and never without a sandbox.
#pragma once

#include <string>

#include "codexd/v1/sandbox.grpc.pb.h"
#include "daemon/config/config.h"
#include "daemon/orchestrator/launch_builder.h"
#include "daemon/server/raw_unary.h"
#include "daemon/server/server_context.h"
#include "platform/sandbox/sandbox.h"

namespace codexd::server {

struct SandboxDeps {
  const config::Config* config = nullptr;            // run-as rules, environment, helper path
  const sandbox::SandboxManager* sandbox = nullptr;  // the daemon's probed manager
  const orchestrator::LaunchBuilder* launches = nullptr;  // the one launch pipeline
  limits::LimitsManager* limits = nullptr;            // each run's resource group (core thread)
};

class SandboxService final : public v1::Sandbox::CallbackService {
 public:
  SandboxService(const CoreContext& core, SandboxDeps deps) : core_(core), deps_(std::move(deps)) {
    MarkMethodRawCallback(raw_method_index(v1::Sandbox::service_full_name(), "RunSandboxed"), raw_unary_handler(this, &SandboxService::RunSandboxed));
  }
  grpc::ServerUnaryReactor* RunSandboxed(grpc::CallbackServerContext* ctx, const v1::SandboxRunRequest* request,
                                         v1::RunCommandResponse* response) override;

 private:
  const CoreContext& core_;
  SandboxDeps deps_;
};

}  // namespace codexd::server
