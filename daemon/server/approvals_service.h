// codexd.v1.Approvals: reviewers watch, list and answer pending approval requests.
#pragma once

#include "codexd/v1/approvals.grpc.pb.h"
#include "daemon/orchestrator/approval_broker.h"
#include "daemon/server/approval_event_protos.h"
#include "daemon/server/raw_unary.h"
#include "daemon/server/server_context.h"

namespace codexd::server {

class ApprovalsService final : public v1::Approvals::CallbackService {
 public:
  // The broker is all it uses.
  ApprovalsService(const CoreContext& core, orchestrator::ApprovalBroker& broker) : core_(core), broker_(broker) {
    MarkMethodRawCallback(raw_method_index(v1::Approvals::service_full_name(), "ListApprovals"), raw_unary_handler(this, &ApprovalsService::ListApprovals));
    MarkMethodRawCallback(raw_method_index(v1::Approvals::service_full_name(), "ResolveApproval"), raw_unary_handler(this, &ApprovalsService::ResolveApproval));
  }

  grpc::ServerWriteReactor<v1::ApprovalEvent>* WatchApprovals(grpc::CallbackServerContext* ctx,
                                                              const v1::WatchApprovalsRequest* request) override;
  grpc::ServerUnaryReactor* ListApprovals(grpc::CallbackServerContext* ctx, const v1::ListApprovalsRequest* request,
                                          v1::ListApprovalsResponse* response) override;
  grpc::ServerUnaryReactor* ResolveApproval(grpc::CallbackServerContext* ctx, const v1::ResolveApprovalRequest* request,
                                            v1::ResolveApprovalResponse* response) override;

 private:
  const CoreContext& core_;
  orchestrator::ApprovalBroker& broker_;
  ApprovalEventProtos protos_;  // core thread
};

}  // namespace codexd::server
