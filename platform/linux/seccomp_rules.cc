#include "platform/linux/seccomp_rules.h"

#include <asm/unistd.h>
#include <errno.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <utility>

namespace codexd::sandbox::linux_backend {
namespace {

#define CODEXD_SYSCALL(name) #name, __NR_##name
#define CODEXD_CALL(name) Syscall{#name, __NR_##name}

constexpr uint64_t kLow32 = 0xffffffffULL;
constexpr uint64_t kSocketTypeMask = 0xf;  // SOCK_TYPE_MASK: strips SOCK_NONBLOCK/CLOEXEC

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif

std::string call_names(const std::vector<Syscall>& calls) {
  std::string names;
  for (const Syscall& call : calls) names += (names.empty() ? "" : ", ") + std::string(call.name);
  return names;
}

int errno_or_eperm(const RefuseGroup& group) { return group.errno_value != 0 ? group.errno_value : EPERM; }

std::string_view errno_name(int err) {
  switch (err) {
    case EPERM: return "EPERM";
    case ENOSYS: return "ENOSYS";
    case EACCES: return "EACCES";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    default: return "an errno";
  }
}

void add_groups(std::vector<SeccompRule>* rules, const std::vector<RefuseGroup>& groups) {
  for (const RefuseGroup& group : groups) {
    std::string label = refuse_group_label(group);
    for (const Syscall& call : group.syscalls) {
      rules->push_back({call.name, call.number, errno_or_eperm(group), {}, label});
    }
  }
}

RefuseGroup group(std::string_view why, std::vector<Syscall> syscalls, int errno_value = 0,
                  std::string_view scope = {}) {
  return {why, std::move(syscalls), errno_value, scope};
}

// Refused in every plan.
const std::vector<RefuseGroup>& always_refused_groups() {
  static const std::vector<RefuseGroup> kGroups = {
      group("other processes",
            {CODEXD_CALL(ptrace), CODEXD_CALL(process_vm_readv), CODEXD_CALL(process_vm_writev),
             CODEXD_CALL(pidfd_getfd), CODEXD_CALL(process_madvise), CODEXD_CALL(kcmp)}),
      group("bypasses socket and file rules",
            {CODEXD_CALL(io_uring_setup), CODEXD_CALL(io_uring_enter), CODEXD_CALL(io_uring_register)}),
      group("kernel attack surface",
            {CODEXD_CALL(bpf), CODEXD_CALL(perf_event_open), CODEXD_CALL(userfaultfd)}),
      group("kernel keyrings are not namespaced",
            {CODEXD_CALL(keyctl), CODEXD_CALL(add_key), CODEXD_CALL(request_key)}),
      group("no new or foreign namespaces", {CODEXD_CALL(unshare), CODEXD_CALL(setns)}),
      group("", {CODEXD_CALL(mount), CODEXD_CALL(umount2), CODEXD_CALL(pivot_root), CODEXD_CALL(chroot),
                 CODEXD_CALL(open_tree), CODEXD_CALL(move_mount), CODEXD_CALL(fsopen), CODEXD_CALL(fsconfig),
                 CODEXD_CALL(fsmount), CODEXD_CALL(fspick), CODEXD_CALL(mount_setattr)}),
      group("host-global state",
            {CODEXD_CALL(kexec_load), CODEXD_CALL(kexec_file_load), CODEXD_CALL(init_module),
             CODEXD_CALL(finit_module), CODEXD_CALL(delete_module), CODEXD_CALL(reboot), CODEXD_CALL(swapon),
             CODEXD_CALL(swapoff), CODEXD_CALL(acct), CODEXD_CALL(sethostname), CODEXD_CALL(setdomainname),
             CODEXD_CALL(settimeofday), CODEXD_CALL(clock_settime), CODEXD_CALL(clock_adjtime),
             CODEXD_CALL(adjtimex), CODEXD_CALL(syslog), CODEXD_CALL(iopl), CODEXD_CALL(ioperm),
             CODEXD_CALL(open_by_handle_at), CODEXD_CALL(lookup_dcookie), CODEXD_CALL(quotactl),
             CODEXD_CALL(vhangup), CODEXD_CALL(uselib), CODEXD_CALL(ustat), CODEXD_CALL(sysfs)}),
      // clone3 passes its flags in memory that seccomp cannot read; ENOSYS makes glibc fall
      // back to clone(), whose flags we can check.
      group("libc falls back to clone", {CODEXD_CALL(clone3)}, ENOSYS),
  };
  return kGroups;
}

// Refused when the network is off, next to the socket-family rules.
const std::vector<RefuseGroup>& network_off_groups() {
  static const std::vector<RefuseGroup> kGroups = {
      group("", {CODEXD_CALL(connect), CODEXD_CALL(bind), CODEXD_CALL(listen), CODEXD_CALL(accept),
                 CODEXD_CALL(accept4), CODEXD_CALL(sendmmsg), CODEXD_CALL(recvmmsg), CODEXD_CALL(getsockopt),
                 CODEXD_CALL(setsockopt), CODEXD_CALL(getpeername), CODEXD_CALL(getsockname),
                 CODEXD_CALL(shutdown)}),
  };
  return kGroups;
}

constexpr std::string_view kLandlockScope = "Landlock backend";

// The metadata keeper's own filter: it performs chmod and chown for the command, and runs nothing.
const std::vector<RefuseGroup>& keeper_only_groups() {
  static const std::vector<RefuseGroup> kGroups = {
      group("the keeper runs nothing", {CODEXD_CALL(execve), CODEXD_CALL(execveat)}),
  };
  return kGroups;
}

// Landlock does not govern file metadata: a command owning files outside its writable roots
// (always the case for uid 0) could chmod them (a setuid bit on a root-owned binary, a
// world-writable /etc file) or set user xattrs. Without a read-only mount to stop it, the
// Landlock backend refuses these calls everywhere, workspace included; chmod and chown only
// when the helper's keeper cannot do them for the command (add_keeper_rules).
const std::vector<RefuseGroup>& keeper_groups() {
  static const std::vector<RefuseGroup> kGroups = {
      group("", {CODEXD_CALL(chmod), CODEXD_CALL(fchmod), CODEXD_CALL(fchmodat), CODEXD_CALL(fchmodat2)}, 0,
            kLandlockScope),
      group("", {CODEXD_CALL(chown), CODEXD_CALL(fchown), CODEXD_CALL(lchown), CODEXD_CALL(fchownat)}, 0,
            kLandlockScope),
  };
  return kGroups;
}

const std::vector<RefuseGroup>& metadata_groups() {
  static constexpr std::string_view kScope = kLandlockScope;
  static const std::vector<RefuseGroup> kGroups = {
      // As if the file system had no extended attributes: copying tools (install, cp -a, tar)
      // then fall back to a plain chmod, which the keeper performs; EPERM made them fail.
      group("as if the file system had no extended attributes",
            {CODEXD_CALL(setxattr), CODEXD_CALL(lsetxattr), CODEXD_CALL(fsetxattr), CODEXD_CALL(setxattrat),
             CODEXD_CALL(removexattr), CODEXD_CALL(lremovexattr), CODEXD_CALL(fremovexattr),
             CODEXD_CALL(removexattrat)},
            EOPNOTSUPP, kScope),
      // bwrap gives the sandbox its own IPC namespace; without one, System V IPC ids and keys are
      // the host's (and guessable), so every call is refused: shmget and the others fail EPERM.
      group("no IPC namespace: host segments, queues and semaphores would be reachable",
            {CODEXD_CALL(shmget), CODEXD_CALL(shmat), CODEXD_CALL(shmctl), CODEXD_CALL(shmdt),
             CODEXD_CALL(msgget), CODEXD_CALL(msgsnd), CODEXD_CALL(msgrcv), CODEXD_CALL(msgctl),
             CODEXD_CALL(semget), CODEXD_CALL(semop), CODEXD_CALL(semtimedop), CODEXD_CALL(semctl)},
            0, kScope),
  };
  return kGroups;
}

void add_always_refused(std::vector<SeccompRule>* rules) {
  add_groups(rules, always_refused_groups());

  const std::string clone_ns = "clone: EPERM when any CLONE_NEW* flag is set";
  for (uint64_t flag : {uint64_t{CLONE_NEWNS}, uint64_t{CLONE_NEWUSER}, uint64_t{CLONE_NEWPID},
                        uint64_t{CLONE_NEWNET}, uint64_t{CLONE_NEWUTS}, uint64_t{CLONE_NEWIPC},
                        uint64_t{CLONE_NEWCGROUP}, uint64_t{CLONE_NEWTIME}}) {
    rules->push_back({CODEXD_SYSCALL(clone), EPERM, {{0, ArgOp::kMaskedEqual, flag, flag}}, clone_ns});
  }

  // personality(2): allow only the query (0xffffffff) and PER_LINUX (0). libseccomp allows one
  // comparison per argument, so "x != 0 && x != ~0" is written as: some bit i is 1 while bit
  // i+1 (mod 32) is 0 — true for every 32-bit value except all-zeros and all-ones.
  const std::string persona = "personality: EPERM unless the query (0xffffffff) or PER_LINUX (0)";
  for (unsigned bit = 0; bit < 32; ++bit) {
    uint64_t one = 1ULL << bit;
    uint64_t next = 1ULL << ((bit + 1) % 32);
    rules->push_back({CODEXD_SYSCALL(personality), EPERM, {{0, ArgOp::kMaskedEqual, one | next, one}}, persona});
  }

  // TIOCSTI pushes bytes into a terminal's input queue: a classic way out via the caller's tty.
  const std::string tty = "ioctl: EPERM for TIOCSTI and TIOCLINUX (terminal input injection)";
  rules->push_back({CODEXD_SYSCALL(ioctl), EPERM, {{1, ArgOp::kMaskedEqual, kLow32, TIOCSTI}}, tty});
  rules->push_back({CODEXD_SYSCALL(ioctl), EPERM, {{1, ArgOp::kMaskedEqual, kLow32, TIOCLINUX}}, tty});

  rules->push_back({CODEXD_SYSCALL(socket), EPERM, {{0, ArgOp::kMaskedEqual, kLow32, AF_VSOCK}},
                    "socket: EPERM for AF_VSOCK (host/VM bridges)"});
  rules->push_back({CODEXD_SYSCALL(socketpair), EPERM, {{0, ArgOp::kMaskedEqual, kLow32, AF_VSOCK}},
                    "socket: EPERM for AF_VSOCK (host/VM bridges)"});
}

void add_network_off(std::vector<SeccompRule>* rules) {
  const std::string families = "socket, socketpair: EPERM for every family but AF_UNIX";
  rules->push_back({CODEXD_SYSCALL(socket), EPERM, {{0, ArgOp::kNotEqual, 0, AF_UNIX}}, families});
  rules->push_back({CODEXD_SYSCALL(socketpair), EPERM, {{0, ArgOp::kNotEqual, 0, AF_UNIX}}, families});

  // A Unix datagram socket can address any visible socket path with sendmsg(msg_name), which
  // seccomp cannot inspect; without datagram sockets, sendmsg only reaches a connected peer.
  const std::string dgram = "socket, socketpair: EPERM for AF_UNIX SOCK_DGRAM (sendmsg could address host sockets)";
  for (const char* name : {"socket", "socketpair"}) {
    int number = std::string_view(name) == "socket" ? __NR_socket : __NR_socketpair;
    rules->push_back({name, number, EPERM,
                      {{0, ArgOp::kMaskedEqual, kLow32, AF_UNIX},
                       {1, ArgOp::kMaskedEqual, kSocketTypeMask, SOCK_DGRAM}},
                      dgram});
  }

  add_groups(rules, network_off_groups());

  // send() is sendto(fd, buf, len, flags, NULL, 0): keep it working on socketpairs, refuse an
  // explicit destination.
  rules->push_back({CODEXD_SYSCALL(sendto), EPERM, {{4, ArgOp::kNotEqual, 0, 0}},
                    "sendto: EPERM with a destination address (send() on a connected pair works)"});
}

// Network mode proxy: the only way out is TCP to the proxy ports, so socket() creates only
// AF_INET and AF_INET6 sockets (Codex's ProxyRouted mode). No AF_UNIX socket (bwrap's
// read-only root still shows host socket paths, and a read-only mount does not stop connect),
// no netlink, no packet or other family; socketpair() stays AF_UNIX stream/seqpacket only.
void add_network_proxy(std::vector<SeccompRule>* rules, bool host_network_namespace) {
  const std::string families = "socket: EPERM for every family but AF_INET and AF_INET6 (proxy mode)";
  for (uint64_t family = 0; family < AF_INET6; ++family) {
    if (family == AF_INET) continue;
    rules->push_back({CODEXD_SYSCALL(socket), EPERM, {{0, ArgOp::kMaskedEqual, kLow32, family}}, families});
  }
  rules->push_back({CODEXD_SYSCALL(socket), EPERM, {{0, ArgOp::kGreater, 0, AF_INET6}}, families});
  rules->push_back({CODEXD_SYSCALL(socketpair), EPERM, {{0, ArgOp::kNotEqual, 0, AF_UNIX}},
                    "socketpair: EPERM for every family but AF_UNIX"});
  rules->push_back({CODEXD_SYSCALL(socketpair), EPERM,
                    {{0, ArgOp::kMaskedEqual, kLow32, AF_UNIX},
                     {1, ArgOp::kMaskedEqual, kSocketTypeMask, SOCK_DGRAM}},
                    "socketpair: EPERM for AF_UNIX SOCK_DGRAM (sendmsg could address host sockets)"});
  if (!host_network_namespace) return;
  // Landlock has no network namespace and no UDP rules: UDP would reach every host port.
  const std::string udp = "socket: EPERM for AF_INET/AF_INET6 SOCK_DGRAM (no network namespace: UDP would reach the host)";
  for (uint64_t family : {uint64_t{AF_INET}, uint64_t{AF_INET6}}) {
    rules->push_back({CODEXD_SYSCALL(socket), EPERM,
                      {{0, ArgOp::kMaskedEqual, kLow32, family}, {1, ArgOp::kMaskedEqual, kSocketTypeMask, SOCK_DGRAM}},
                      udp});
  }
}

void add_unix_socket_block(std::vector<SeccompRule>* rules, bool network) {
  // Without a mount namespace every host socket path is visible, so no Unix socket may be
  // created at all; socketpair() stays (it can only talk to its twin).
  rules->push_back({CODEXD_SYSCALL(socket), EPERM, {{0, ArgOp::kMaskedEqual, kLow32, AF_UNIX}},
                    "socket: EPERM for AF_UNIX (host socket paths are visible; socketpair still works)"});
  if (!network) return;  // the network-off rules already refuse datagram pairs
  rules->push_back({CODEXD_SYSCALL(socketpair), EPERM,
                    {{0, ArgOp::kMaskedEqual, kLow32, AF_UNIX},
                     {1, ArgOp::kMaskedEqual, kSocketTypeMask, SOCK_DGRAM}},
                    "socketpair: EPERM for AF_UNIX SOCK_DGRAM (sendmsg could address host sockets)"});
}

// Exec supervision and the metadata keeper: the newest filter's listener would get the
// notification first, and could answer it with "continue", so a listener made inside could
// answer the command's execs in the daemon's place, or run its chmods unchecked.
void add_listener_lock(std::vector<SeccompRule>* rules, const HelperConfig& config) {
  const std::string who = config.supervise_exec ? "the keeper answers every chmod and chown, and relays every exec to codexd"
                                                : "the keeper answers every chmod and chown";
  rules->push_back({CODEXD_SYSCALL(seccomp), EPERM,
                    {{0, ArgOp::kEqual, 0, SECCOMP_SET_MODE_FILTER},
                     {1, ArgOp::kMaskedEqual, SECCOMP_FILTER_FLAG_NEW_LISTENER, SECCOMP_FILTER_FLAG_NEW_LISTENER}},
                    "seccomp(SET_MODE_FILTER) with NEW_LISTENER: EPERM (" + who + ")"});
}

// A setuid file left in a writable root would run with its owner's rights for whoever starts
// it later, outside the sandbox, and the owner may be root. bwrap's writable binds let the
// owner set the bit; without the keeper (which checks this itself) the filter refuses it.
void add_setuid_refusal(std::vector<SeccompRule>* rules) {
  const std::string label = "chmod, fchmod, fchmodat, fchmodat2: EPERM when the mode has the setuid bit";
  for (const auto& [call, mode_arg] : {std::pair<Syscall, unsigned>{CODEXD_CALL(chmod), 1}, {CODEXD_CALL(fchmod), 1},
                                       {CODEXD_CALL(fchmodat), 2}, {CODEXD_CALL(fchmodat2), 2}}) {
    rules->push_back({call.name, call.number, EPERM, {{mode_arg, ArgOp::kMaskedEqual, S_ISUID, S_ISUID}}, label});
  }
}

// With the keeper, chmod and chown are performed by the helper's keeper process for the
// command, with its credentials, inside the writable roots only (writable_scope.h).
void add_keeper_rules(std::vector<SeccompRule>* rules) {
  for (const RefuseGroup& calls : keeper_groups()) {
    const bool modes = calls.syscalls.front().number == __NR_chmod;
    const std::string label = call_names(calls.syscalls) +
                              ": performed by the helper's keeper inside the writable roots, not below read-only paths" +
                              (modes ? ", never adding setuid (or setgid to a file)" : "") + "; EPERM elsewhere";
    for (const Syscall& call : calls.syscalls) {
      SeccompRule rule{call.name, call.number, 0, {}, label};
      rule.notify = true;
      rules->push_back(std::move(rule));
    }
  }
}

#undef CODEXD_CALL
#undef CODEXD_SYSCALL

}  // namespace

std::string refuse_group_label(const RefuseGroup& group) {
  const std::string names = call_names(group.syscalls);
  std::string scope = group.scope.empty() ? "" : " (" + std::string(group.scope) + ")";
  int err = errno_or_eperm(group);
  std::string label = err == EPERM ? "refused" + scope + ": " + names
                                   : names + scope + ": " + std::string(errno_name(err));
  if (!group.why.empty()) label += " (" + std::string(group.why) + ")";
  return label;
}

std::vector<SeccompRule> seccomp_rules(const HelperConfig& config, FilterRole role) {
  std::vector<SeccompRule> rules;
  add_always_refused(&rules);
  switch (config.network) {
    case NetworkMode::kOff: add_network_off(&rules); break;
    case NetworkMode::kProxy: add_network_proxy(&rules, config.mode == HelperMode::kLandlock); break;
    case NetworkMode::kHost: break;
  }
  // Proxy mode already refuses every AF_UNIX socket and datagram pair.
  if (config.block_unix_sockets && config.network != NetworkMode::kProxy) {
    add_unix_socket_block(&rules, config.network == NetworkMode::kHost);
  }
  if (role == FilterRole::kKeeper) {
    add_groups(&rules, keeper_only_groups());
  } else if (config.metadata_keeper) {
    add_keeper_rules(&rules);
  } else if (config.mode == HelperMode::kLandlock) {
    add_groups(&rules, keeper_groups());
  } else {
    add_setuid_refusal(&rules);
  }
  if (config.mode == HelperMode::kLandlock) add_groups(&rules, metadata_groups());
  if (config.supervise_exec || config.metadata_keeper) add_listener_lock(&rules, config);
  return rules;
}

std::vector<std::string> describe_seccomp_rules(const HelperConfig& config) {
  std::vector<std::string> lines = {
      "seccomp: default allow; a refused call fails with the errno shown (EPERM unless noted)",
      "seccomp: x32 and every non-native ABI (int 0x80) kill the process (SIGSYS)",
      "no_new_privs set; all capabilities dropped (bounding, ambient, inheritable); securebits locked when permitted",
  };
  for (const SeccompRule& rule : seccomp_rules(config)) {
    std::string line = "seccomp: " + rule.label;
    if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(line);
  }
  if (config.supervise_exec) {
    lines.push_back(config.exec_audit_only
                        ? "seccomp: execve, execveat: each reported to codexd by the keeper before it runs (exec supervision, audit)"
                        : "seccomp: execve, execveat: each waits for codexd's decision, relayed by the keeper (exec supervision)");
  }
  if (config.metadata_keeper) {
    lines.push_back("seccomp: the keeper (the command's parent) runs under the same filter without the chmod and chown "
                    "rules, with execve and execveat refused, not dumpable");
  }
  return lines;
}

}  // namespace codexd::sandbox::linux_backend
