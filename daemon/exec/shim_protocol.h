// The wire between codexd and a session's shim (daemon/shim/): one SOCK_SEQPACKET socket,
// so the kernel keeps message boundaries and order, and no framing code is needed. Each
// message is a type byte and a payload; numbers are little-endian (both ends are the same
// machine, but a fixed order keeps the format a format). Versioned by kShimProtocolVersion,
// which the shim reports in its state; a daemon adopts shims from kOldestShimProtocol on and
// refuses others clearly.
//
// daemon -> shim                           shim -> daemon
//   kSpawnFds  (descriptors, see below)      kSpawned  pid
//   kSpawn     SpawnRequest as JSON          kSpawnFailed  message
//   kHello     (a daemon reconnecting)       kProxyChannel (2+) one descriptor, just before kState
//                                            kState    ShimState as JSON (answer to kHello)
//   kInput     bytes for the command         kOutput   offset + bytes
//   kResize    rows, cols                    kOutputClosed
//   kDelivered offset the client has seen    kExited   exit code, signal, core flag
//   kReap      reap the exited leader
//   kRelease   session over: kill, reap, remove the record, exit
//
// Network mode proxy (protocol 2): the sandbox's proxy channel ends at the shim, not the
// daemon. The shim keeps the one message the sandbox sends over it (the listening proxy
// ports: a payload and descriptors, never parsed) and relays a copy to every daemon it serves,
// each over a fresh SOCK_SEQPACKET pair: the first daemon gives the shim that pair's end with
// the spawn descriptors; a reconnecting one gets its end in kProxyChannel. The daemon reads
// its end exactly as it read the sandbox's channel before, so the proxy needs no other path.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "daemon/exec/exit_status.h"
#include "platform/posix/spawn.h"

namespace codexd::exec::shim {

// 2: kProxyChannel (the proxy ports survive a restart). 1 has no proxy relay.
inline constexpr int kShimProtocolVersion = 2;
inline constexpr int kOldestShimProtocol = 1;
// The largest message either side sends: output and input travel in chunks of at most this
// many bytes (plus the header). Both ends size their socket buffers for several of them.
// A whole message stays within 64 KiB: asio::async_write hands the kernel at most 65536
// bytes per write, and on a SOCK_SEQPACKET socket each write is one message, so a longer one
// would arrive as two (the second read as garbage).
inline constexpr size_t kMaxMessage = 64 * 1024;
inline constexpr size_t kMaxChunk = kMaxMessage - 64;
// A spawn request (argv + environment) may be larger than one chunk.
inline constexpr size_t kMaxSpawnMessage = 4 * 1024 * 1024;

enum class Type : char {
  kSpawnFds = 'F',
  kSpawn = 'S',
  kHello = 'H',
  kInput = 'I',
  kResize = 'Z',
  kDelivered = 'D',
  kReap = 'P',
  kRelease = 'X',
  kSpawned = 's',
  kSpawnFailed = 'f',
  kProxyChannel = 'n',
  kState = 't',
  kOutput = 'o',
  kOutputClosed = 'c',
  kExited = 'e',
};

// What a reconnecting daemon learns from a shim.
struct ShimState {
  int protocol = kShimProtocolVersion;
  pid_t pid = -1;
  uint64_t begin_offset = 0;      // oldest output byte the shim still holds
  uint64_t end_offset = 0;        // total output bytes so far
  uint64_t delivered_offset = 0;  // what the last daemon said its clients had seen
  bool output_closed = false;
  bool input_open = false;
  bool reaped = false;  // the daemon said kReap: the pid may belong to someone else now
  std::optional<ExitStatus> exit;
  // A terminal session's current window size (the shim asks its PTY); 0: no terminal, or a
  // shim too old to say.
  unsigned short rows = 0;
  unsigned short cols = 0;
};

// Encoders: the whole message, ready for one send().
std::string encode(Type type, std::string_view payload = {});
std::string encode_offset_data(Type type, uint64_t offset, std::string_view data);  // kOutput
std::string encode_u64(Type type, uint64_t value);                                   // kDelivered
std::string encode_resize(unsigned short rows, unsigned short cols);
std::string encode_exit(const ExitStatus& status);
std::string encode_pid(pid_t pid);

// Decoders of a payload (the message without its type byte). InvalidArgument when short.
Result<std::pair<uint64_t, std::string_view>> decode_offset_data(std::string_view payload);
Result<uint64_t> decode_u64(std::string_view payload);
Result<std::pair<unsigned short, unsigned short>> decode_resize(std::string_view payload);
Result<ExitStatus> decode_exit(std::string_view payload);
Result<pid_t> decode_pid(std::string_view payload);

// The spawn request without its descriptors (pass_fd, program_fd, join_fds and, with
// `relays_proxy`, the sandbox's proxy channel and the first daemon's relay end travel in
// kSpawnFds, in that order; `has_pass_fd` and `has_program_fd` say whether the first ones are
// there). `sandboxed`: the command runs in a
// sandbox, so the shim takes no_new_privs too (absent in an older daemon's request: not sandboxed).
// `session_dir` and `shim_join_fd_count` are for a shim started ahead (no SESSION_DIR argument):
// where it listens, and how many cgroup.procs files (after the proxy's two) it moves itself into.
std::string spawn_request_json(const posix::SpawnRequest& request, size_t attach_window_bytes, bool sandboxed,
                               bool relays_proxy = false, std::string_view session_dir = {},
                               size_t shim_join_fd_count = 0);
struct DecodedSpawn {
  posix::SpawnRequest request;  // pass_fd and join_fds unset
  bool has_pass_fd = false;
  bool has_program_fd = false;
  size_t join_fd_count = 0;
  std::string session_dir;        // empty: the shim's argument names it
  size_t shim_join_fd_count = 0;  // the shim's own cgroup.procs files, last
  bool relays_proxy = false;  // two more descriptors: the proxy channel, the relay end
  size_t attach_window_bytes = 1024 * 1024;
  bool sandboxed = false;
};
Result<DecodedSpawn> parse_spawn_request(std::string_view json);

std::string state_json(const ShimState& state);
Result<ShimState> parse_state(std::string_view json);

}  // namespace codexd::exec::shim
