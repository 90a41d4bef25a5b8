// Starts the real codexd the way systemd does: NOTIFY_SOCKET kept open for the daemon's whole
// life (READY=1, STATUS=, RELOADING=1, STOPPING=1 are events the tests wait for), optionally a
// listening socket passed as fd 3 with LISTEN_FDS=1 and LISTEN_PID set in the child after
// fork, optionally as another user. Also: a real user's gRPC calls via codexd_system_rpc.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <google/protobuf/message.h>
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"
#include "tests/support/test_daemon.h"
#include "tests/support/test_users.h"

namespace codexd::testing {

struct DaemonLaunch {
  std::string config;              // the whole TOML file ("": use <dir>/codexd.toml as it is)
  std::vector<std::string> env;    // extra NAME=VALUE
  const TestUser* as_user = nullptr;  // run the daemon as this user (initgroups/setgid/setuid)
  int listen_fd = -1;              // passed as fd 3 with LISTEN_FDS=1
  bool foreign_listen_pid = false; // LISTEN_PID names another process (systemd's "not for you")
  std::vector<std::string> args;   // extra arguments after --config FILE
};

inline DaemonLaunch launch_config(std::string config) {
  DaemonLaunch launch;
  launch.config = std::move(config);
  return launch;
}

class SystemDaemon {
 public:
  // `dir` holds codexd.toml, codexd.log and notify.sock; it must exist and be reachable.
  SystemDaemon(const std::string& dir, DaemonLaunch launch);
  ~SystemDaemon();
  SystemDaemon(const SystemDaemon&) = delete;
  SystemDaemon& operator=(const SystemDaemon&) = delete;

  pid_t pid() const { return pid_; }
  bool wait_ready(std::chrono::seconds guard = std::chrono::seconds(30)) { return wait_notify("READY=1", guard).has_value(); }
  // The next notify datagram (after the previous match) that contains `needle`; nullopt when
  // the daemon exits first or `guard` passes.
  std::optional<std::string> wait_notify(const std::string& needle, std::chrono::seconds guard = std::chrono::seconds(30));
  const std::vector<std::string>& notifications() const { return messages_; }
  // SIGTERM; returns the exit code (128+signal if killed). Idempotent.
  int stop();
  // Waits for an exit the daemon does by itself.
  int wait_exit(std::chrono::seconds guard = std::chrono::seconds(30));
  std::string log() const;
  const std::string& config_path() const { return config_path_; }

 private:
  bool read_pending(int timeout_ms);
  std::string dir_, config_path_, log_path_, notify_path_;
  int notify_fd_ = -1, pidfd_ = -1;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int exit_code_ = -1;
  size_t cursor_ = 0;
  std::vector<std::string> messages_;
};

// A unique temp directory outside /tmp (workspace-write makes /tmp writable, which would hide
// sandbox denials), mode 0755 so test users reach what is inside; removed by the destructor.
class TempRoot : public TempDir {
 public:
  TempRoot() : TempDir("codexd-sys", TempLocation::kOutsideTmp, 0755) {}
};

// The result of one RPC made by codexd_system_rpc.
struct RpcOutcome {
  int code = -1;  // grpc::StatusCode, -1: the client did not run
  std::string message;
  std::vector<std::string> json;  // response messages
  std::string raw;                // everything it printed (for failure messages)
  bool ok() const { return code == 0; }
  template <typename T>
  T response(size_t i = 0) const {
    T out;
    if (i < json.size()) (void)google::protobuf::util::JsonStringToMessage(json[i], &out);
    return out;
  }
};

std::string rpc_client_binary();
std::string to_json(const google::protobuf::Message& message);
// Calls METHOD on the daemon at `socket` as `user` (nullptr: as root).
RpcOutcome call_as(const TestUser* user, const std::string& socket, const std::string& method,
                   const google::protobuf::Message& request);
RpcOutcome parse_rpc_output(const ProcessResult& result);

}  // namespace codexd::testing
