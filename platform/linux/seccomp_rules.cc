#include "platform/linux/seccomp_rules.h"

#include <asm/unistd.h>
#include <errno.h>
#include <linux/sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>

namespace codexd::sandbox::linux_backend {
namespace {

#define CODEXD_SYSCALL(name) #name, __NR_##name

constexpr uint64_t kLow32 = 0xffffffffULL;
constexpr uint64_t kSocketTypeMask = 0xf;  // SOCK_TYPE_MASK: strips SOCK_NONBLOCK/CLOEXEC

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

void refuse(std::vector<SeccompRule>* rules, const char* name, int number, std::string label,
            int err = EPERM) {
  rules->push_back({name, number, err, {}, std::move(label)});
}

void add_always_refused(std::vector<SeccompRule>* rules) {
  const std::string debug =
      "refused: ptrace, process_vm_readv/writev, pidfd_getfd, process_madvise, kcmp (other processes)";
  refuse(rules, CODEXD_SYSCALL(ptrace), debug);
  refuse(rules, CODEXD_SYSCALL(process_vm_readv), debug);
  refuse(rules, CODEXD_SYSCALL(process_vm_writev), debug);
  refuse(rules, CODEXD_SYSCALL(pidfd_getfd), debug);
  refuse(rules, CODEXD_SYSCALL(process_madvise), debug);
  refuse(rules, CODEXD_SYSCALL(kcmp), debug);

  const std::string uring = "refused: io_uring_setup/enter/register (bypasses socket and file rules)";
  refuse(rules, CODEXD_SYSCALL(io_uring_setup), uring);
  refuse(rules, CODEXD_SYSCALL(io_uring_enter), uring);
  refuse(rules, CODEXD_SYSCALL(io_uring_register), uring);

  const std::string kernel = "refused: bpf, perf_event_open, userfaultfd (kernel attack surface)";
  refuse(rules, CODEXD_SYSCALL(bpf), kernel);
  refuse(rules, CODEXD_SYSCALL(perf_event_open), kernel);
  refuse(rules, CODEXD_SYSCALL(userfaultfd), kernel);

  const std::string keys = "refused: keyctl, add_key, request_key (kernel keyrings are not namespaced)";
  refuse(rules, CODEXD_SYSCALL(keyctl), keys);
  refuse(rules, CODEXD_SYSCALL(add_key), keys);
  refuse(rules, CODEXD_SYSCALL(request_key), keys);

  const std::string ns = "refused: unshare, setns (no new or foreign namespaces)";
  refuse(rules, CODEXD_SYSCALL(unshare), ns);
  refuse(rules, CODEXD_SYSCALL(setns), ns);

  const std::string mounts =
      "refused: mount, umount2, pivot_root, chroot, open_tree, move_mount, fsopen, fsconfig, "
      "fsmount, fspick, mount_setattr";
  refuse(rules, CODEXD_SYSCALL(mount), mounts);
  refuse(rules, CODEXD_SYSCALL(umount2), mounts);
  refuse(rules, CODEXD_SYSCALL(pivot_root), mounts);
  refuse(rules, CODEXD_SYSCALL(chroot), mounts);
  refuse(rules, CODEXD_SYSCALL(open_tree), mounts);
  refuse(rules, CODEXD_SYSCALL(move_mount), mounts);
  refuse(rules, CODEXD_SYSCALL(fsopen), mounts);
  refuse(rules, CODEXD_SYSCALL(fsconfig), mounts);
  refuse(rules, CODEXD_SYSCALL(fsmount), mounts);
  refuse(rules, CODEXD_SYSCALL(fspick), mounts);
  refuse(rules, CODEXD_SYSCALL(mount_setattr), mounts);

  const std::string host =
      "refused: kexec_load, kexec_file_load, init_module, finit_module, delete_module, reboot, "
      "swapon, swapoff, acct, sethostname, setdomainname, settimeofday, clock_settime, "
      "clock_adjtime, adjtimex, syslog, iopl, ioperm, open_by_handle_at, lookup_dcookie, "
      "quotactl, vhangup, uselib, ustat, sysfs (host-global state)";
  refuse(rules, CODEXD_SYSCALL(kexec_load), host);
  refuse(rules, CODEXD_SYSCALL(kexec_file_load), host);
  refuse(rules, CODEXD_SYSCALL(init_module), host);
  refuse(rules, CODEXD_SYSCALL(finit_module), host);
  refuse(rules, CODEXD_SYSCALL(delete_module), host);
  refuse(rules, CODEXD_SYSCALL(reboot), host);
  refuse(rules, CODEXD_SYSCALL(swapon), host);
  refuse(rules, CODEXD_SYSCALL(swapoff), host);
  refuse(rules, CODEXD_SYSCALL(acct), host);
  refuse(rules, CODEXD_SYSCALL(sethostname), host);
  refuse(rules, CODEXD_SYSCALL(setdomainname), host);
  refuse(rules, CODEXD_SYSCALL(settimeofday), host);
  refuse(rules, CODEXD_SYSCALL(clock_settime), host);
  refuse(rules, CODEXD_SYSCALL(clock_adjtime), host);
  refuse(rules, CODEXD_SYSCALL(adjtimex), host);
  refuse(rules, CODEXD_SYSCALL(syslog), host);
  refuse(rules, CODEXD_SYSCALL(iopl), host);
  refuse(rules, CODEXD_SYSCALL(ioperm), host);
  refuse(rules, CODEXD_SYSCALL(open_by_handle_at), host);
  refuse(rules, CODEXD_SYSCALL(lookup_dcookie), host);
  refuse(rules, CODEXD_SYSCALL(quotactl), host);
  refuse(rules, CODEXD_SYSCALL(vhangup), host);
  refuse(rules, CODEXD_SYSCALL(uselib), host);
  refuse(rules, CODEXD_SYSCALL(ustat), host);
  refuse(rules, CODEXD_SYSCALL(sysfs), host);

  // clone3 passes its flags in memory that seccomp cannot read; ENOSYS makes glibc fall back
  // to clone(), whose flags we can check.
  refuse(rules, CODEXD_SYSCALL(clone3), "clone3: ENOSYS (libc falls back to clone)", ENOSYS);
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

  const std::string calls =
      "refused: connect, bind, listen, accept, accept4, sendmmsg, recvmmsg, getsockopt, "
      "setsockopt, getpeername, getsockname, shutdown";
  refuse(rules, CODEXD_SYSCALL(connect), calls);
  refuse(rules, CODEXD_SYSCALL(bind), calls);
  refuse(rules, CODEXD_SYSCALL(listen), calls);
  refuse(rules, CODEXD_SYSCALL(accept), calls);
  refuse(rules, CODEXD_SYSCALL(accept4), calls);
  refuse(rules, CODEXD_SYSCALL(sendmmsg), calls);
  refuse(rules, CODEXD_SYSCALL(recvmmsg), calls);
  refuse(rules, CODEXD_SYSCALL(getsockopt), calls);
  refuse(rules, CODEXD_SYSCALL(setsockopt), calls);
  refuse(rules, CODEXD_SYSCALL(getpeername), calls);
  refuse(rules, CODEXD_SYSCALL(getsockname), calls);
  refuse(rules, CODEXD_SYSCALL(shutdown), calls);

  // send() is sendto(fd, buf, len, flags, NULL, 0): keep it working on socketpairs, refuse an
  // explicit destination.
  rules->push_back({CODEXD_SYSCALL(sendto), EPERM, {{4, ArgOp::kNotEqual, 0, 0}},
                    "sendto: EPERM with a destination address (send() on a connected pair works)"});
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

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif

// Landlock does not govern file metadata: a command owning files outside its writable roots
// (always the case for uid 0) could chmod them (a setuid bit on a root-owned binary, a
// world-writable /etc file) or set user xattrs. Without a read-only mount to stop it, the
// Landlock backend refuses these calls everywhere, workspace included.
void add_metadata_block(std::vector<SeccompRule>* rules) {
  const std::string modes = "refused (Landlock backend): chmod, fchmod, fchmodat, fchmodat2";
  refuse(rules, CODEXD_SYSCALL(chmod), modes);
  refuse(rules, CODEXD_SYSCALL(fchmod), modes);
  refuse(rules, CODEXD_SYSCALL(fchmodat), modes);
  refuse(rules, CODEXD_SYSCALL(fchmodat2), modes);
  const std::string owners = "refused (Landlock backend): chown, fchown, lchown, fchownat";
  refuse(rules, CODEXD_SYSCALL(chown), owners);
  refuse(rules, CODEXD_SYSCALL(fchown), owners);
  refuse(rules, CODEXD_SYSCALL(lchown), owners);
  refuse(rules, CODEXD_SYSCALL(fchownat), owners);
  const std::string xattrs = "refused (Landlock backend): setxattr and removexattr families";
  refuse(rules, CODEXD_SYSCALL(setxattr), xattrs);
  refuse(rules, CODEXD_SYSCALL(lsetxattr), xattrs);
  refuse(rules, CODEXD_SYSCALL(fsetxattr), xattrs);
  refuse(rules, CODEXD_SYSCALL(setxattrat), xattrs);
  refuse(rules, CODEXD_SYSCALL(removexattr), xattrs);
  refuse(rules, CODEXD_SYSCALL(lremovexattr), xattrs);
  refuse(rules, CODEXD_SYSCALL(fremovexattr), xattrs);
  refuse(rules, CODEXD_SYSCALL(removexattrat), xattrs);
}

#undef CODEXD_SYSCALL

}  // namespace

std::vector<SeccompRule> seccomp_rules(const HelperConfig& config) {
  std::vector<SeccompRule> rules;
  add_always_refused(&rules);
  if (!config.network) add_network_off(&rules);
  if (config.block_unix_sockets) add_unix_socket_block(&rules, config.network);
  if (config.mode == HelperMode::kLandlock) add_metadata_block(&rules);
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
  return lines;
}

}  // namespace codexd::sandbox::linux_backend
