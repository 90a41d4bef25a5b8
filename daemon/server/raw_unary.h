// Unary methods that parse their own request, so that bytes which are not a valid message
// (malformed protobuf, a string field that is not UTF-8) get INVALID_ARGUMENT "request could not
// be parsed as codexd.v1.X" instead of gRPC 1.51's UNIMPLEMENTED with an empty message (its
// CallbackUnaryHandler answers every failed parse that way and lets no one see it).
//
// Each service marks its unary methods raw in its constructor:
//   MarkMethodRawCallback(raw_method_index(v1::Exec::service_full_name(), "Poll"),
//                         raw_unary_handler(this, &ExecService::Poll));
// The raw handler parses the bytes into a request it owns, calls the typed method with it and
// a response it owns, and writes the response's bytes when the method's reactor finishes. The
// typed method's reactor is the one begin_unary() made (core_reactors.h): begin_unary hands it
// to the raw call that is running on this thread (RawUnaryBinding), which is how the response
// gets serialized before Finish and the messages freed after OnDone. Streaming methods
// (Attach, WatchApprovals) stay typed (docs/api.md "Errors").
#pragma once

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/server_callback_handlers.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "daemon/server/core_reactors.h"

namespace codexd::server {

// The index of `method` in the service `service_full_name` (its order in the .proto file), for
// MarkMethodRawCallback; the method is recorded as raw (is_raw_method).
int raw_method_index(const char* service_full_name, const char* method);
// Whether the method at gRPC path "/package.Service/Method" was marked raw: its messages are
// grpc::ByteBuffer, not the generated types (the RPC log parses them itself).
bool is_raw_method(std::string_view grpc_path);

// A reactor that only answers `status` (and deletes itself when done).
class FailedUnaryReactor : public grpc::ServerUnaryReactor {
 public:
  explicit FailedUnaryReactor(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

// The request a method served by raw_unary_handler is called with is the handler's own message
// (RawUnaryMessages::request, not const there), kept until the call ends: such a method may
// take a large field out of it once it is validated, so that a call waiting long (for a
// reviewer) does not hold it twice (issue 19 item 5). Only for methods marked raw.
template <typename Request>
Request& owned_request(const Request* request) {
  return const_cast<Request&>(*request);
}

template <typename Request, typename Response>
struct RawUnaryMessages {
  Request request;
  Response response;
};

template <typename Service, typename Request, typename Response>
grpc::internal::MethodHandler* raw_unary_handler(
    Service* service, grpc::ServerUnaryReactor* (Service::*method)(grpc::CallbackServerContext*, const Request*, Response*)) {
  return new grpc::internal::CallbackUnaryHandler<grpc::ByteBuffer, grpc::ByteBuffer>(
      [service, method](grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                        grpc::ByteBuffer* out) -> grpc::ServerUnaryReactor* {
        auto messages = std::make_unique<RawUnaryMessages<Request, Response>>();
        grpc::ByteBuffer bytes;
        if (in != nullptr) bytes = *in;  // shares the slices
        if (in == nullptr || !grpc::SerializationTraits<Request>::Deserialize(&bytes, &messages->request).ok()) {
          return new FailedUnaryReactor(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                                     "request could not be parsed as " + Request::descriptor()->full_name()));
        }
        // The wire bytes are not needed once parsed, and gRPC would keep them until the call
        // ends: a request waiting for a reviewer held its megabyte argv twice (issue 19). gRPC
        // reads a unary request buffer only to hand it to this handler.
        const_cast<grpc::ByteBuffer*>(in)->Clear();
        auto* m = messages.release();
        RawUnaryBinding binding;
        binding.before_finish = [m, out](const grpc::Status& status) {
          if (!status.ok()) return;
          bool own_buffer = false;
          (void)grpc::SerializationTraits<Response>::Serialize(m->response, out, &own_buffer);
        };
        binding.after_done = [m] { delete m; };
        RawUnaryBinding::Scope scope(&binding);
        return (service->*method)(ctx, &m->request, &m->response);
      });
}

}  // namespace codexd::server
