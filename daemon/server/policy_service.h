// codexd.v1.Policy: what ExecCommand's policy step would decide, without running anything.
#pragma once

#include "codexd/v1/policy.grpc.pb.h"
#include "daemon/config/config.h"
#include "daemon/orchestrator/policy_store.h"
#include "daemon/server/raw_unary.h"
#include "daemon/server/server_context.h"

namespace codexd::server {

struct PolicyDeps {
  const config::Config* config = nullptr;               // approval policy, sandbox mode, run-as rules
  const orchestrator::PolicyStore* policies = nullptr;  // the rules in force
};

class PolicyService final : public v1::Policy::CallbackService {
 public:
  PolicyService(const CoreContext& core, PolicyDeps deps) : core_(core), deps_(deps) {
    MarkMethodRawCallback(raw_method_index(v1::Policy::service_full_name(), "CheckPolicy"), raw_unary_handler(this, &PolicyService::CheckPolicy));
  }
  grpc::ServerUnaryReactor* CheckPolicy(grpc::CallbackServerContext* ctx, const v1::CheckPolicyRequest* request,
                                        v1::CheckPolicyResponse* response) override;

 private:
  const CoreContext& core_;
  PolicyDeps deps_;
};

}  // namespace codexd::server
