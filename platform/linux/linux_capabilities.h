// The Linux backend's own view of the machine and its own options: what the OS-neutral
// CapabilityReport / SandboxManagerOptions do not carry (bwrap, user namespaces, Landlock,
// seccomp). daemon/server reads these for Admin.GetStatus; the neutral report shows them as
// CapabilityFacts (capability_facts below), so the two cannot disagree.
#pragma once

#include <string>
#include <vector>

#include "platform/sandbox/sandbox.h"

namespace codexd::sandbox::linux_backend {

struct LinuxCapabilities {
  std::string bwrap_path;                // empty: no trusted bwrap found
  std::string bwrap_version;
  std::vector<std::string> bwrap_flags;  // optional flags this bwrap supports
  bool user_namespaces_usable = false;
  bool proc_mount_usable = false;        // bwrap can mount a fresh /proc (else the no-/proc fallback)
  int landlock_abi = 0;
  bool seccomp_available = false;
  bool exec_supervision = false;  // seccomp user notification with CONTINUE, and pidfd_getfd
};

struct LinuxSandboxOptions {
  // Where bwrap may live (absolute, trusted system paths only). Empty: the built-in list
  // (/usr/bin/bwrap, /usr/local/bin/bwrap, /bin/bwrap).
  std::vector<std::string> bwrap_candidates;
  bool no_bwrap = false;       // behave as if bwrap were not installed (tests, debugging)
  bool force_no_proc = false;  // use the no-/proc fallback even if /proc mounts (tests)
};

// The report lines for `caps`, in display order: bwrap, bwrap optional flags, unprivileged
// user namespaces, fresh /proc in sandbox, landlock ABI, seccomp.
std::vector<CapabilityFact> capability_facts(const LinuxCapabilities& caps);

// The Linux details of a manager made by create_linux_sandbox_manager (what
// create_sandbox_manager returns on Linux); nullptr for any other manager.
const LinuxCapabilities* linux_capabilities(const SandboxManager& manager);

}  // namespace codexd::sandbox::linux_backend
