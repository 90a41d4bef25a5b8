// codexd.v1.Approvals: reviewers watch, list and answer pending approval requests.
#pragma once

#include "codexd/v1/approvals.grpc.pb.h"
#include "daemon/server/server_context.h"

namespace codexd::server {

class ApprovalsService final : public v1::Approvals::CallbackService {
 public:
  explicit ApprovalsService(const DaemonParts& parts) : parts_(parts) {}

  grpc::ServerWriteReactor<v1::ApprovalEvent>* WatchApprovals(grpc::CallbackServerContext* ctx,
                                                              const v1::WatchApprovalsRequest* request) override;
  grpc::ServerUnaryReactor* ListApprovals(grpc::CallbackServerContext* ctx, const v1::ListApprovalsRequest* request,
                                          v1::ListApprovalsResponse* response) override;
  grpc::ServerUnaryReactor* ResolveApproval(grpc::CallbackServerContext* ctx, const v1::ResolveApprovalRequest* request,
                                            v1::ResolveApprovalResponse* response) override;

 private:
  const DaemonParts& parts_;
};

}  // namespace codexd::server
