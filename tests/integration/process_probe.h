// Process-level helpers for integration tests: watching processes die (pidfd, an event, not a
// sleep), reading /proc, FIFO handshakes with commands, background clients, and connections
// to the daemon made as another uid.
#pragma once

#include <sys/types.h>

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"  // read_text_file

namespace codexd::testing {

// /proc/<pid>/stat state letter ('R', 'S', 'Z', ...), or 0 when the pid does not exist.
char process_state(pid_t pid);
// Alive and not a zombie.
bool process_running(pid_t pid);
// The pids whose parent is `parent` (from /proc/*/stat), with their state letters.
struct ChildProcess {
  pid_t pid;
  char state;
};
std::vector<ChildProcess> children_of(pid_t parent);
// Resident memory of a process in bytes (/proc/<pid>/status VmRSS), 0 when it is gone.
uint64_t resident_bytes(pid_t pid);
// Open descriptors of a process (/proc/<pid>/fd).
size_t open_fd_count(pid_t pid);
// The process's descriptors that are ends of Unix connections to `socket_path` (the listener
// and each accepted connection: /proc/net/unix names the bound path for both), not its other
// sockets (socketpairs to shims, gRPC internals).
size_t connection_fd_count(pid_t pid, const std::string& socket_path);
// The process's descriptors by kind ("socket", "pipe", "file", "cgroup file",
// "anon_inode:[eventfd]", ...).
std::map<std::string, size_t> open_fd_kinds(pid_t pid);

// Waits (pidfd readiness, bounded by `guard`) until `pid` has exited. True when it is gone or a
// zombie; false if it still runs after the guard.
bool wait_process_exit(pid_t pid, std::chrono::milliseconds guard = std::chrono::seconds(30));

// Checks `done` every 100 ms, `tries` times at most; true once it holds. For states with no event
// to wait on (another process's descriptors, RSS, a request arriving); the caller says why.
bool eventually(const std::function<bool()>& done, int tries = 300);

// A named pipe in `dir`: commands block on it until the test writes, or tell the test they are
// ready by writing to it.
class Fifo {
 public:
  Fifo(const std::string& dir, const std::string& name);
  ~Fifo();
  const std::string& path() const { return path_; }
  // Blocks until a reader opens it, writes, closes (the reader sees EOF after the data).
  void write(const std::string& data) const;
  // Blocks until a writer opens it, reads to EOF.
  std::string read_all() const;

 private:
  std::string path_;
};

// First integer after `key` in `text` ("gc=123" with key "gc="), or nullopt.
std::optional<long> find_number(const std::string& text, const std::string& key);

// A program started in the background (stdout/stderr to /dev/null), for clients that get killed.
class BackgroundProcess {
 public:
  explicit BackgroundProcess(const std::vector<std::string>& argv);
  ~BackgroundProcess();
  pid_t pid() const { return pid_; }
  // SIGKILL and reap; returns the wait status.
  int kill_and_reap();

 private:
  pid_t pid_ = -1;
};

// A gRPC channel over one connection made by a child process running as `uid` (SO_PEERCRED is
// taken at connect time, so the daemon sees that uid). The child stays alive (the daemon checks
// the peer's namespaces through its pid) until this object goes away.
class ChannelAsUid {
 public:
  ChannelAsUid(const std::string& socket_path, uid_t uid);
  ~ChannelAsUid();
  bool ok() const { return channel_ != nullptr; }
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }

 private:
  pid_t holder_ = -1;
  int release_fd_ = -1;
  std::shared_ptr<grpc::Channel> channel_;
};

// A raw connection to the daemon's socket (no gRPC).
int connect_unix(const std::string& socket_path);
// Waits (poll, bounded by `guard`) until the daemon ends the connection `fd`: true on EOF or
// reset.
bool closed_by_daemon(int fd, std::chrono::milliseconds guard);

}  // namespace codexd::testing
