#include "base/status.h"

#include <cerrno>
#include <cstring>

namespace codexd {

std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kCancelled: return "CANCELLED";
    case StatusCode::kUnknown: return "UNKNOWN";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kAlreadyExists: return "ALREADY_EXISTS";
    case StatusCode::kPermissionDenied: return "PERMISSION_DENIED";
    case StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case StatusCode::kFailedPrecondition: return "FAILED_PRECONDITION";
    case StatusCode::kAborted: return "ABORTED";
    case StatusCode::kOutOfRange: return "OUT_OF_RANGE";
    case StatusCode::kUnimplemented: return "UNIMPLEMENTED";
    case StatusCode::kInternal: return "INTERNAL";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
    case StatusCode::kDataLoss: return "DATA_LOSS";
    case StatusCode::kUnauthenticated: return "UNAUTHENTICATED";
  }
  return "UNKNOWN";
}

std::string Status::to_string() const {
  if (ok()) return "OK";
  std::string out(status_code_name(code_));
  out += ": ";
  out += message_;
  return out;
}

Status Status::with_context(std::string_view context) const {
  if (ok()) return *this;
  std::string msg(context);
  msg += ": ";
  msg += message_;
  return {code_, std::move(msg)};
}

Status ErrnoStatus(std::string_view what, int err) {
  StatusCode code = StatusCode::kInternal;
  switch (err) {
    case ENOENT: case ENOTDIR: code = StatusCode::kNotFound; break;
    case EACCES: case EPERM: code = StatusCode::kPermissionDenied; break;
    case EEXIST: code = StatusCode::kAlreadyExists; break;
    case EINVAL: case ENAMETOOLONG: case E2BIG: case ELOOP: code = StatusCode::kInvalidArgument; break;
    case EMFILE: case ENFILE: case ENOMEM: case EAGAIN: case ENOSPC: code = StatusCode::kResourceExhausted; break;
    default: break;
  }
  std::string msg(what);
  msg += ": ";
  msg += std::strerror(err);
  return {code, std::move(msg)};
}

}  // namespace codexd
