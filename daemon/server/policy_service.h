// codexd.v1.Policy: what ExecCommand's policy step would decide, without running anything.
#pragma once

#include "codexd/v1/policy.grpc.pb.h"
#include "daemon/server/server_context.h"

namespace codexd::server {

class PolicyService final : public v1::Policy::CallbackService {
 public:
  explicit PolicyService(const DaemonParts& parts) : parts_(parts) {}
  grpc::ServerUnaryReactor* CheckPolicy(grpc::CallbackServerContext* ctx, const v1::CheckPolicyRequest* request,
                                        v1::CheckPolicyResponse* response) override;

 private:
  const DaemonParts& parts_;
};

}  // namespace codexd::server
