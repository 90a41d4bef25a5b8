#include "daemon/server/rpc_log.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>
#include <string>

#include "base/status.h"
#include "codexd/api_constants.h"
#include "daemon/server/raw_unary.h"

namespace codexd::server {
namespace {

namespace gx = grpc::experimental;
namespace pb = google::protobuf;
using Hook = gx::InterceptionHookPoints;

// "/codexd.v1.Exec/Poll" -> the method's descriptor.
const pb::MethodDescriptor* method_descriptor(std::string_view path) {
  if (path.size() < 2 || path[0] != '/') return nullptr;
  std::string name(path.substr(1));
  const size_t slash = name.find('/');
  if (slash == std::string::npos) return nullptr;
  name[slash] = '.';
  return pb::DescriptorPool::generated_pool()->FindMethodByName(name);
}

// The ids a message names ("session 1002", "approval apr_..."): what an operator greps for.
std::string ids_of(const pb::Message& message) {
  std::string ids;
  const pb::Reflection* reflection = message.GetReflection();
  for (const char* name : {"session_id", "approval_id"}) {
    const pb::FieldDescriptor* field = message.GetDescriptor()->FindFieldByName(name);
    if (field == nullptr || field->is_repeated()) continue;
    if (field->has_presence() && !reflection->HasField(message, field)) continue;
    std::string value;
    switch (field->cpp_type()) {
      case pb::FieldDescriptor::CPPTYPE_INT32: value = std::to_string(reflection->GetInt32(message, field)); break;
      case pb::FieldDescriptor::CPPTYPE_INT64: value = std::to_string(reflection->GetInt64(message, field)); break;
      case pb::FieldDescriptor::CPPTYPE_UINT32: value = std::to_string(reflection->GetUInt32(message, field)); break;
      case pb::FieldDescriptor::CPPTYPE_STRING: value = reflection->GetString(message, field); break;
      default: continue;
    }
    if (value.empty() || value == "0") continue;
    ids += std::string(ids.empty() ? "" : " ") + (field->name() == "session_id" ? "session=" : "approval=") + value;
  }
  return ids;
}

// A raw method's bytes, parsed as the method's request or response type.
std::string ids_of_bytes(const pb::Descriptor* type, grpc::ByteBuffer* bytes) {
  if (type == nullptr || bytes == nullptr) return {};
  grpc::Slice slice;
  if (!bytes->TrySingleSlice(&slice).ok() && !bytes->DumpToSingleSlice(&slice).ok()) return {};
  // codexd's own types: generated, so the generated factory has their prototypes.
  const pb::Message* prototype = pb::MessageFactory::generated_factory()->GetPrototype(type);
  if (prototype == nullptr) return {};
  std::unique_ptr<pb::Message> message(prototype->New());
  if (!message->ParseFromArray(slice.begin(), static_cast<int>(slice.size()))) return {};
  return ids_of(*message);
}

std::string sanitized(std::string_view text, size_t max) {
  std::string out(text.substr(0, max));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '"') c = '?';
  }
  return out;
}

class RpcLogInterceptor : public gx::Interceptor {
 public:
  RpcLogInterceptor(gx::ServerRpcInfo* info, const PeerRegistry* peers)
      : info_(info),
        peers_(peers),
        // Messages are looked into only for codexd's own methods: gRPC's services (health,
        // reflection) may use raw buffers or types of their own.
        method_(std::string_view(info->method()).rfind("/codexd.", 0) == 0 ? method_descriptor(info->method()) : nullptr),
        raw_(is_raw_method(info->method())),
        unary_(info->type() == gx::ServerRpcInfo::Type::UNARY),
        started_(std::chrono::steady_clock::now()) {}

  ~RpcLogInterceptor() override {
    if (!logged_) log("ended without a status (the client went away)");
  }

  void Intercept(gx::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(Hook::POST_RECV_INITIAL_METADATA)) take_agent(methods->GetRecvInitialMetadata());
    if (methods->QueryInterceptionHookPoint(Hook::POST_RECV_MESSAGE) && !saw_request_) {
      saw_request_ = true;
      take_ids(request_ids_, methods->GetRecvMessage());
    }
    // A unary reply may carry the id the call made (ExecCommand's new session). A stream's
    // replies are many: only the request's ids are logged.
    if (unary_ && method_ != nullptr && methods->QueryInterceptionHookPoint(Hook::PRE_SEND_MESSAGE) &&
        response_ids_.empty()) {
      response_ids_ = ids_of_bytes(method_->output_type(), methods->GetSerializedSendMessage());
    }
    if (methods->QueryInterceptionHookPoint(Hook::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      std::string outcome(status_code_name(static_cast<StatusCode>(static_cast<int>(status.error_code()))));
      if (!status.ok()) outcome += " \"" + sanitized(status.error_message(), 300) + "\"";
      log(outcome);
    }
    methods->Proceed();
  }

 private:
  void take_agent(std::multimap<grpc::string_ref, grpc::string_ref>* metadata) {
    if (metadata == nullptr) return;
    auto it = metadata->find(api::kAgentIdMetadataKey);
    if (it != metadata->end()) agent_ = sanitized(std::string_view(it->second.data(), it->second.size()), 128);
  }

  void take_ids(std::string& into, void* message) {
    if (message == nullptr || method_ == nullptr) return;
    if (raw_) {
      into = ids_of_bytes(method_->input_type(), static_cast<grpc::ByteBuffer*>(message));
    } else {
      // A typed method (the streams, gRPC's own services): its message is the generated type,
      // and every generated type derives from pb::Message alone.
      into = ids_of(*static_cast<pb::Message*>(message));
    }
  }

  void log(const std::string& outcome) {
    logged_ = true;
    std::string who = "caller unknown";
    if (auto peer = peers_->find(info_->server_context()->peer())) {
      who = "uid=" + std::to_string(peer->uid) + " pid=" + std::to_string(peer->pid);
    }
    if (!agent_.empty()) who += " agent=\"" + agent_ + "\"";
    std::string ids = request_ids_;
    if (!response_ids_.empty() && response_ids_ != request_ids_) ids += (ids.empty() ? "" : " ") + response_ids_;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started_).count();
    spdlog::debug("rpc {} {}{}{} -> {} in {:.1f} ms", info_->method(), who, ids.empty() ? "" : " ", ids, outcome, ms);
  }

  gx::ServerRpcInfo* info_;
  const PeerRegistry* peers_;
  const pb::MethodDescriptor* method_;
  const bool raw_;
  const bool unary_;
  const std::chrono::steady_clock::time_point started_;
  std::string agent_;
  std::string request_ids_;
  std::string response_ids_;
  bool saw_request_ = false;
  bool logged_ = false;
};

class RpcLogFactory : public gx::ServerInterceptorFactoryInterface {
 public:
  explicit RpcLogFactory(const PeerRegistry* peers) : peers_(peers) {}
  gx::Interceptor* CreateServerInterceptor(gx::ServerRpcInfo* info) override {
    return new RpcLogInterceptor(info, peers_);
  }

 private:
  const PeerRegistry* peers_;
};

}  // namespace

std::unique_ptr<gx::ServerInterceptorFactoryInterface> make_rpc_log_interceptor_factory(const PeerRegistry* peers) {
  return std::make_unique<RpcLogFactory>(peers);
}

}  // namespace codexd::server
