#include "client/connection.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "client/terminal.h"
#include "codexd/api_constants.h"

namespace codexd::client {
namespace {

// gRPC tears itself down when its last channel goes (grpc_shutdown: quiesce and join its
// threads, destroy the event engine), a few ms per codexctl run and more under load; most of it
// was Abseil's Mutex calibrating the TSC with 1 ms + 2 ms sleeps the first time the teardown
// contends a lock (strace -k; bench/client/run.sh). A process about to exit gains nothing from
// it, and the daemon sees the same close of the connection either way: one extra grpc_init()
// keeps gRPC up until exit_process() ends the process with _exit. The sanitizer build keeps
// the full teardown and a normal exit, so LeakSanitizer still checks it.
void keep_grpc_until_exit() {
#ifndef CODEXD_SANITIZE
  static std::once_flag once;
  std::call_once(once, [] { grpc_init(); });
#endif
}

}  // namespace

void exit_process(int code) {
#ifdef CODEXD_SANITIZE
  std::exit(code);
#else
  RawTerminal::restore_now();  // what the std::atexit handler would have done
  std::fflush(nullptr);
  ::_exit(code);
#endif
}

std::string socket_path(const std::string& socket) {
  // unix:PATH as in the daemon's `listen` (and gRPC's unix:///abs), or the path itself.
  if (socket.rfind("unix://", 0) == 0) return socket.substr(7);
  if (socket.rfind("unix:", 0) == 0) return socket.substr(5);
  return socket;
}

std::shared_ptr<grpc::Channel> connect(const ClientOptions& options, grpc::ChannelArguments args) {
  keep_grpc_until_exit();
  args.SetMaxReceiveMessageSize(64 * 1024 * 1024);
  return grpc::CreateCustomChannel("unix:" + socket_path(options.socket), grpc::InsecureChannelCredentials(), args);
}

void prepare(grpc::ClientContext& context, const ClientOptions& options) {
  if (!options.agent_id.empty()) context.AddMetadata(api::kAgentIdMetadataKey, options.agent_id);
}

int report_rpc_error(const grpc::Status& status, const ClientOptions& options) {
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    std::fprintf(stderr, "codexctl: cannot reach codexd at %s: %s\n(is the daemon running? set --socket or CODEXD_SOCKET)\n",
                 options.socket.c_str(), status.error_message().c_str());
  } else {
    std::fprintf(stderr, "codexctl: %s\n", status.error_message().c_str());
  }
  return kExitRpcError;
}

}  // namespace codexd::client
