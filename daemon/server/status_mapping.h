// codexd::Status -> grpc::Status (the codes are the same numbers by design).
#pragma once

#include <grpcpp/support/status.h>

#include "base/status.h"

namespace codexd::server {

inline grpc::Status to_grpc(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(static_cast<int>(status.code())), status.message());
}

}  // namespace codexd::server
