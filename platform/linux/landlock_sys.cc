#include "platform/linux/landlock_sys.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace codexd::sandbox::linux_backend {
namespace {

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

constexpr unsigned kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;
constexpr int kRuleNetPort = 2;  // ABI 4

struct NetPortAttr {
  uint64_t allowed_access;
  uint64_t port;
};

// The ruleset attribute grows with the ABI; the kernel accepts any prefix it knows.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

}  // namespace

namespace landlock {

uint64_t handled_fs_rights(int abi) {
  if (abi <= 0) return 0;
  uint64_t rights = (1ULL << 13) - 1;  // ABI 1: execute .. make_sym
  if (abi >= 2) rights |= kRefer;
  if (abi >= 3) rights |= kTruncate;
  return rights;
}

uint64_t write_rights(int abi) { return handled_fs_rights(abi) & ~kReadRights; }

}  // namespace landlock

int landlock_abi_version() {
  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

int landlock_create_ruleset_fd(uint64_t handled_fs, uint64_t handled_net, uint64_t scoped, int abi) {
  RulesetAttr attr{handled_fs, handled_net, scoped};
  size_t size = sizeof(uint64_t);
  if (abi >= 4) size = 2 * sizeof(uint64_t);
  if (abi >= 6) size = sizeof(RulesetAttr);
  return static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0U));
}

int landlock_add_path_rule(int ruleset_fd, int parent_fd, uint64_t allowed_access) {
  PathBeneathAttr attr{allowed_access, parent_fd};
  return static_cast<int>(::syscall(SYS_landlock_add_rule, ruleset_fd, kRulePathBeneath, &attr, 0U));
}

int landlock_add_net_port_rule(int ruleset_fd, uint16_t port, uint64_t allowed_access) {
  NetPortAttr attr{allowed_access, port};
  return static_cast<int>(::syscall(SYS_landlock_add_rule, ruleset_fd, kRuleNetPort, &attr, 0U));
}

int landlock_restrict_self_fd(int ruleset_fd) {
  return static_cast<int>(::syscall(SYS_landlock_restrict_self, ruleset_fd, 0U));
}

}  // namespace codexd::sandbox::linux_backend
