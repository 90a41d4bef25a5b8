// Landlock system-call wrappers and the constants newer than Debian 12's kernel headers
// (which stop at ABI 2). Values are the kernel's uapi values.
#pragma once

#include <cstdint>

namespace codexd::sandbox::linux_backend {

namespace landlock {
// Filesystem rights, ABI 1.
inline constexpr uint64_t kExecute = 1ULL << 0;
inline constexpr uint64_t kWriteFile = 1ULL << 1;
inline constexpr uint64_t kReadFile = 1ULL << 2;
inline constexpr uint64_t kReadDir = 1ULL << 3;
inline constexpr uint64_t kRemoveDir = 1ULL << 4;
inline constexpr uint64_t kRemoveFile = 1ULL << 5;
inline constexpr uint64_t kMakeChar = 1ULL << 6;
inline constexpr uint64_t kMakeDir = 1ULL << 7;
inline constexpr uint64_t kMakeReg = 1ULL << 8;
inline constexpr uint64_t kMakeSock = 1ULL << 9;
inline constexpr uint64_t kMakeFifo = 1ULL << 10;
inline constexpr uint64_t kMakeBlock = 1ULL << 11;
inline constexpr uint64_t kMakeSym = 1ULL << 12;
inline constexpr uint64_t kRefer = 1ULL << 13;     // ABI 2
inline constexpr uint64_t kTruncate = 1ULL << 14;  // ABI 3
inline constexpr uint64_t kIoctlDev = 1ULL << 15;  // ABI 5 (not handled by codexd)
// Network rights, ABI 4.
inline constexpr uint64_t kNetBindTcp = 1ULL << 0;
inline constexpr uint64_t kNetConnectTcp = 1ULL << 1;
// Scopes, ABI 6.
inline constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0;
inline constexpr uint64_t kScopeSignal = 1ULL << 1;

inline constexpr uint64_t kReadRights = kExecute | kReadFile | kReadDir;
inline constexpr uint64_t kFileOnlyRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;

// The filesystem rights an ABI version can handle (kIoctlDev excluded on purpose: device
// ioctls on already-open descriptors are not affected anyway, and handling it would break
// terminals opened later).
uint64_t handled_fs_rights(int abi);
// Write-type rights available at `abi` (everything handled but the read rights).
uint64_t write_rights(int abi);
}  // namespace landlock

// Highest ABI the running kernel supports; 0 when Landlock is unavailable or disabled.
int landlock_abi_version();

// Thin wrappers; return -1 and set errno on failure.
int landlock_create_ruleset_fd(uint64_t handled_fs, uint64_t handled_net, uint64_t scoped, int abi);
int landlock_add_path_rule(int ruleset_fd, int parent_fd, uint64_t allowed_access);
int landlock_add_net_port_rule(int ruleset_fd, uint16_t port, uint64_t allowed_access);  // ABI 4
int landlock_restrict_self_fd(int ruleset_fd);

}  // namespace codexd::sandbox::linux_backend
