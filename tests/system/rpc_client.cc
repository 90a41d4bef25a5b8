// A tiny gRPC client for the system tests: one call per run, request as JSON, so a test can
// make any call as any real user (run as that user) and see the exact status code.
//
//   codexd_system_rpc SOCKET METHOD JSON
//
// Prints "STATUS <code> <message>" on the first line, then each response message as one line
// of JSON (a stream prints one line per event). Exit 0 whenever the call was made.
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "codexd/api_constants.h"
#include "codexd/v1/admin.grpc.pb.h"
#include "codexd/v1/approvals.grpc.pb.h"
#include "codexd/v1/exec.grpc.pb.h"
#include "codexd/v1/policy.grpc.pb.h"
#include "codexd/v1/sandbox.grpc.pb.h"

namespace {

using namespace codexd::v1;
using google::protobuf::Message;

void print_status(const grpc::Status& status) {
  std::string message = status.error_message();
  for (auto& c : message) {
    if (c == '\n') c = ' ';
  }
  std::printf("STATUS %d %s\n", static_cast<int>(status.error_code()), message.c_str());
}

void print_message(const Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  std::printf("%s\n", json.c_str());
}

bool parse(const std::string& json, Message* message) {
  auto status = google::protobuf::util::JsonStringToMessage(json, message);
  if (!status.ok()) std::fprintf(stderr, "bad request JSON: %s\n", std::string(status.message()).c_str());
  return status.ok();
}

void prepare(grpc::ClientContext& context) {
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(90));
  context.AddMetadata(codexd::api::kAgentIdMetadataKey, "system-test");
}

template <typename Req, typename Resp, typename Stub>
int unary(const std::string& json, Stub* stub,
          grpc::Status (Stub::*method)(grpc::ClientContext*, const Req&, Resp*)) {
  Req request;
  if (!parse(json, &request)) return 2;
  grpc::ClientContext context;
  prepare(context);
  Resp response;
  grpc::Status status = (stub->*method)(&context, request, &response);
  print_status(status);
  if (status.ok()) print_message(response);
  return 0;
}

template <typename Req, typename Event, typename Stub>
int server_stream(const std::string& json, Stub* stub,
                  std::unique_ptr<grpc::ClientReader<Event>> (Stub::*method)(grpc::ClientContext*, const Req&)) {
  Req request;
  if (!parse(json, &request)) return 2;
  grpc::ClientContext context;
  prepare(context);
  auto reader = (stub->*method)(&context, request);
  std::vector<Event> events;
  Event event;
  while (reader->Read(&event)) events.push_back(event);
  print_status(reader->Finish());
  for (const auto& e : events) print_message(e);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s SOCKET METHOD JSON\n", argv[0]);
    return 2;
  }
  auto channel = grpc::CreateChannel(std::string("unix:") + argv[1], grpc::InsecureChannelCredentials());
  const std::string method = argv[2];
  const std::string json = argv[3];
  auto exec = Exec::NewStub(channel);
  auto approvals = Approvals::NewStub(channel);
  auto admin = Admin::NewStub(channel);
  auto policy = Policy::NewStub(channel);
  auto sandbox = Sandbox::NewStub(channel);
  std::map<std::string, std::function<int()>> calls = {
      {"ExecCommand", [&] { return unary(json, exec.get(), &Exec::Stub::ExecCommand); }},
      {"WriteStdin", [&] { return unary(json, exec.get(), &Exec::Stub::WriteStdin); }},
      {"Poll", [&] { return unary(json, exec.get(), &Exec::Stub::Poll); }},
      {"Cancel", [&] { return unary(json, exec.get(), &Exec::Stub::Cancel); }},
      {"ListSessions", [&] { return unary(json, exec.get(), &Exec::Stub::ListSessions); }},
      {"RunCommand", [&] { return unary(json, exec.get(), &Exec::Stub::RunCommand); }},
      {"SendInput", [&] { return unary(json, exec.get(), &Exec::Stub::SendInput); }},
      {"ResizeTerminal", [&] { return unary(json, exec.get(), &Exec::Stub::ResizeTerminal); }},
      {"Attach", [&] { return server_stream(json, exec.get(), &Exec::Stub::Attach); }},
      {"ListApprovals", [&] { return unary(json, approvals.get(), &Approvals::Stub::ListApprovals); }},
      {"ResolveApproval", [&] { return unary(json, approvals.get(), &Approvals::Stub::ResolveApproval); }},
      {"GetStatus", [&] { return unary(json, admin.get(), &Admin::Stub::GetStatus); }},
      {"ReloadPolicy", [&] { return unary(json, admin.get(), &Admin::Stub::ReloadPolicy); }},
      {"CheckPolicy", [&] { return unary(json, policy.get(), &Policy::Stub::CheckPolicy); }},
      {"RunSandboxed", [&] { return unary(json, sandbox.get(), &Sandbox::Stub::RunSandboxed); }},
  };
  auto it = calls.find(method);
  if (it == calls.end()) {
    std::fprintf(stderr, "unknown method %s\n", method.c_str());
    return 2;
  }
  return it->second();
}
