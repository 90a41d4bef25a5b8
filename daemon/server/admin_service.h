// codexd.v1.Admin: status and policy reload.
#pragma once

#include "codexd/v1/admin.grpc.pb.h"
#include "daemon/server/server_context.h"

namespace codexd::server {

class AdminService final : public v1::Admin::CallbackService {
 public:
  explicit AdminService(const DaemonParts& parts) : parts_(parts) {}
  grpc::ServerUnaryReactor* GetStatus(grpc::CallbackServerContext* ctx, const v1::GetStatusRequest* request,
                                      v1::GetStatusResponse* response) override;
  grpc::ServerUnaryReactor* ReloadPolicy(grpc::CallbackServerContext* ctx, const v1::ReloadPolicyRequest* request,
                                         v1::ReloadPolicyResponse* response) override;

 private:
  const DaemonParts& parts_;
};

void fill_policy_status(const orchestrator::PolicyState& state, const std::string& approval_policy, v1::PolicyStatus* out);

}  // namespace codexd::server
