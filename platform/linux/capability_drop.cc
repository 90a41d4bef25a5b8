#include "platform/linux/capability_drop.h"

#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace codexd::sandbox::linux_backend {
namespace {

struct CapSets {
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
};

Result<CapSets> read_caps() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  CapSets sets;
  if (::syscall(SYS_capget, &header, sets.data) != 0) return ErrnoStatus("capget", errno);
  return sets;
}

bool has_effective(const CapSets& sets, int cap) {
  return (sets.data[cap / 32].effective & (1U << (cap % 32))) != 0;
}

int read_last_cap() {
  int last = CAP_LAST_CAP;
  if (FILE* f = std::fopen("/proc/sys/kernel/cap_last_cap", "re")) {
    int value = 0;
    if (std::fscanf(f, "%d", &value) == 1 && value > 0 && value < 64) last = value;
    std::fclose(f);
  }
  return last;
}

// Read once per process: it was read for every capability in each loop, 84 opens per launch.
int last_cap() {
  static const int last = read_last_cap();
  return last;
}

}  // namespace

Status drop_all_capabilities() {
  CODEXD_ASSIGN_OR_RETURN(CapSets before, read_caps());
  if (has_effective(before, CAP_SETPCAP)) {
    // Locked securebits: exec as uid 0 grants nothing, setuid transitions keep nothing, and
    // ambient capabilities cannot be raised again.
    unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                         SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                         SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    if (::prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) return ErrnoStatus("PR_SET_SECUREBITS", errno);
    for (int cap = 0; cap <= last_cap(); ++cap) {
      if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
        return ErrnoStatus("PR_CAPBSET_DROP", errno);
      }
    }
  }
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    return ErrnoStatus("PR_CAP_AMBIENT_CLEAR_ALL", errno);
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct empty[_LINUX_CAPABILITY_U32S_3]{};
  if (::syscall(SYS_capset, &header, empty) != 0) return ErrnoStatus("capset", errno);

  CODEXD_ASSIGN_OR_RETURN(bool none, holds_no_capabilities());
  if (!none) return Internal("capabilities still held after dropping them");
  // uid 0 regains its bounding set on every exec unless SECBIT_NOROOT says otherwise.
  int securebits = ::prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
  bool noroot = securebits >= 0 && (securebits & SECBIT_NOROOT) != 0;
  if ((::geteuid() == 0 || ::getuid() == 0) && !noroot) {
    for (int cap = 0; cap <= last_cap(); ++cap) {
      if (::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) > 0) {
        return Internal("running as uid 0 with a non-empty bounding set and no SECBIT_NOROOT: "
                        "exec would regain capabilities");
      }
    }
  }
  return Status::Ok();
}

Result<bool> holds_no_capabilities() {
  CODEXD_ASSIGN_OR_RETURN(CapSets sets, read_caps());
  for (const auto& word : sets.data) {
    if (word.effective != 0 || word.permitted != 0 || word.inheritable != 0) return false;
  }
  for (int cap = 0; cap <= last_cap(); ++cap) {
    int raised = ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0);
    if (raised > 0) return false;
  }
  return true;
}

}  // namespace codexd::sandbox::linux_backend
