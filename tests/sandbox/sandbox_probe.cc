// sandbox_probe: attempts one thing and reports whether it worked. The escape tests run it
// twice: unsandboxed (the control, which must succeed) and sandboxed (which must fail).
// Exit 0: the attempt succeeded. Exit 1: it failed (the reason is printed). Exit 2: bad usage.
// The probe is deliberately plain C-style code with no dependencies on codexd.
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <termios.h>
#include <unistd.h>

#include <string>

namespace {

int failed(const char* what) {
  printf("FAILED %s: %s\n", what, strerror(errno));
  return 1;
}

int ok(const char* what) {
  printf("OK %s\n", what);
  return 0;
}

int write_file(const char* path, const char* content, int flags) {
  int fd = open(path, O_WRONLY | O_CLOEXEC | flags, 0644);
  if (fd < 0) return failed("open for write");
  ssize_t n = write(fd, content, strlen(content));
  int err = errno;
  close(fd);
  errno = err;
  if (n != static_cast<ssize_t>(strlen(content))) return failed("write");
  return ok("write");
}

int read_file(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return failed("open for read");
  char buf[4096];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  int err = errno;
  close(fd);
  errno = err;
  if (n < 0) return failed("read");
  buf[n] = '\0';
  printf("CONTENT %s\n", buf);
  return ok("read");
}

// Waits for a reply on `fd` (bounded so a lost datagram cannot hang the test forever).
int expect_pong(int fd, const char* what) {
  pollfd p{fd, POLLIN, 0};
  int ready = poll(&p, 1, 10000);
  if (ready <= 0) {
    errno = ready == 0 ? ETIMEDOUT : errno;
    return failed(what);
  }
  char buf[16] = {};
  ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
  if (n < 4 || strncmp(buf, "pong", 4) != 0) return failed(what);
  return ok(what);
}

int inet_exchange(int family, int type, const char* host, int port) {
  int fd = socket(family, type | SOCK_CLOEXEC, 0);
  if (fd < 0) return failed("socket");
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, host, &a->sin_addr);
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET6, host, &a->sin6_addr);
    len = sizeof *a;
  }
  // UDP is connected too: a closed port then fails at once (ICMP port unreachable) instead
  // of waiting out the reply timeout.
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) return failed("connect");
  if (send(fd, "ping", 4, 0) != 4) return failed("send");
  return expect_pong(fd, "exchange");
}

// The port of "http://127.0.0.1:PORT" in the variable `name`; 0 when unset or malformed.
int port_from_proxy_variable(const char* name) {
  const char* value = getenv(name);
  const char* prefix_http = "http://127.0.0.1:";
  const char* prefix_socks = "socks5h://127.0.0.1:";
  if (value == nullptr) return 0;
  if (strncmp(value, prefix_http, strlen(prefix_http)) == 0) return atoi(value + strlen(prefix_http));
  if (strncmp(value, prefix_socks, strlen(prefix_socks)) == 0) return atoi(value + strlen(prefix_socks));
  return 0;
}

// Both proxy ports named by the environment answer (the test's stand-in proxy says "pong").
int proxy_ping() {
  for (const char* variable : {"http_proxy", "ALL_PROXY"}) {
    int port = port_from_proxy_variable(variable);
    if (port == 0) {
      errno = ENOENT;
      return failed(variable);
    }
    if (inet_exchange(AF_INET, SOCK_STREAM, "127.0.0.1", port) != 0) return 1;
  }
  return ok("proxy-ping");
}

// Lists links over rtnetlink; prints their count. Fails when netlink is refused.
int netlink_links() {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0 /* NETLINK_ROUTE */);
  if (fd < 0) return failed("netlink socket");
  struct {
    struct { uint32_t len; uint16_t type, flags; uint32_t seq, pid; } header;
    unsigned char family, pad; uint16_t type; int32_t index; uint32_t flags, change;
  } request{{sizeof request, 18 /* RTM_GETLINK */, 0x301 /* NLM_F_REQUEST|NLM_F_DUMP */, 1, 0}, 0, 0, 0, 0, 0, 0};
  if (send(fd, &request, sizeof request, 0) < 0) return failed("netlink send");
  char buf[16384];
  ssize_t n = recv(fd, buf, sizeof buf, 0);
  if (n <= 0) return failed("netlink recv");
  printf("NETLINK %zd bytes\n", n);
  return ok("netlink");
}

// Listens on 127.0.0.1:PORT.
int tcp4_listen(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return failed("socket");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return failed("bind");
  return listen(fd, 1) == 0 ? ok("listen") : failed("listen");
}

// A minimal DNS query for "codexd.test" type A.
int dns_query(const char* host, int port) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return failed("socket");
  const unsigned char query[] = {0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 6, 'c', 'o', 'd', 'e', 'x',
                                 'd', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1};
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host, &a.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return failed("connect");
  if (send(fd, query, sizeof query, 0) < 0) return failed("send");
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 10000) <= 0) return failed("dns reply");
  unsigned char reply[512];
  ssize_t n = recv(fd, reply, sizeof reply, 0);
  if (n < 12 || reply[0] != 0x12 || reply[1] != 0x34) return failed("dns reply");
  return ok("dns");
}

socklen_t unix_address(const char* path, bool abstract, sockaddr_un* addr) {
  memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  size_t len = strlen(path);
  if (abstract) {
    memcpy(addr->sun_path + 1, path, len);
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + len);
  }
  memcpy(addr->sun_path, path, len);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len + 1);
}

int unix_stream(const char* path, bool abstract) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return failed("socket");
  sockaddr_un addr;
  socklen_t len = unix_address(path, abstract, &addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) return failed("connect");
  if (send(fd, "ping", 4, 0) != 4) return failed("send");
  return expect_pong(fd, "unix exchange");
}

// Datagram to a host socket path: via socket()+sendto, socket()+sendmsg, or a datagram
// socketpair whose sendmsg names another address.
int unix_dgram(const char* path, const char* how) {
  int fd = -1;
  if (strcmp(how, "socketpair") == 0) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) != 0) return failed("socketpair");
    fd = pair[0];
  } else {
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return failed("socket");
  }
  sockaddr_un addr;
  socklen_t len = unix_address(path, false, &addr);
  if (strcmp(how, "sendto") == 0) {
    if (sendto(fd, "ping", 4, 0, reinterpret_cast<sockaddr*>(&addr), len) != 4) return failed("sendto");
    return ok("sendto");
  }
  char data[] = "ping";
  iovec iov{data, 4};
  msghdr msg{};
  msg.msg_name = &addr;
  msg.msg_namelen = len;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (sendmsg(fd, &msg, 0) != 4) return failed("sendmsg");
  return ok("sendmsg");
}

int read_capability_set(const char* field, unsigned long long* value) {
  FILE* f = fopen("/proc/self/status", "re");
  if (f == nullptr) return -1;
  char line[256];
  int found = -1;
  while (fgets(line, sizeof line, f) != nullptr) {
    if (strncmp(line, field, strlen(field)) == 0) {
      *value = strtoull(line + strlen(field), nullptr, 16);
      found = 0;
    }
  }
  fclose(f);
  return found;
}

mode_t octal(const char* text) { return static_cast<mode_t>(strtoul(text, nullptr, 8)); }

// chmod-race TARGET LINK SWAPS: LINK is a regular file and LINK.alt a symlink to TARGET; a
// child swaps the two names (RENAME_EXCHANGE) while this process chmods LINK to 0777, at
// least 5,000 times and until SWAPS swaps are done, stopping early once TARGET has changed. Success (an escape) = TARGET
// ends up 0777. Counting swaps as well as chmods tries every phase of the race however the
// two processes are scheduled.
int chmod_race(const char* target, const char* link_path, long swaps) {
  const std::string alt = std::string(link_path) + ".alt";
  if (write_file(link_path, "decoy\n", O_CREAT | O_TRUNC) != 0) return 1;
  if (symlink(target, alt.c_str()) != 0) return failed("symlink");
  auto* done = static_cast<volatile long*>(mmap(nullptr, sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (done == MAP_FAILED) return failed("mmap");
  *done = 0;
  pid_t swapper = fork();
  if (swapper < 0) return failed("fork");
  if (swapper == 0) {
    for (long i = 1;; ++i) {
      syscall(SYS_renameat2, AT_FDCWD, link_path, AT_FDCWD, alt.c_str(), 2 /* RENAME_EXCHANGE */);
      *done = i;
    }
  }
  auto changed = [&] {
    struct stat st;
    return stat(target, &st) == 0 && (st.st_mode & 0777) == 0777;
  };
  constexpr long kMinChmods = 5000;
  for (long chmods = 0; (chmods < kMinChmods || *done < swaps) && !changed(); ++chmods) chmod(link_path, 0777);
  kill(swapper, SIGKILL);
  waitpid(swapper, nullptr, 0);
  return changed() ? ok("target changed") : failed("target unchanged");
}

// parent-fds: success (an escape) = a descriptor of the parent process can be opened, or its
// memory read.
int parent_fds() {
  const std::string proc = "/proc/" + std::to_string(getppid());
  for (int n = 0; n < 64; ++n) {
    int fd = open((proc + "/fd/" + std::to_string(n)).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      printf("opened parent descriptor %d\n", n);
      return 0;
    }
  }
  int mem = open((proc + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (mem >= 0) return ok("parent memory");
  return failed("parent descriptors and memory");
}

// fchmod-opath: success = fchmod and fchown of an O_PATH descriptor fail with EBADF, as the
// kernel answers them (a keeper performing them would not).
int fchmod_opath(const char* path) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return failed("open O_PATH");
  if (fchmod(fd, 0700) == 0) return failed("fchmod of an O_PATH descriptor succeeded");
  if (errno != EBADF) return failed("fchmod of an O_PATH descriptor: not EBADF");
  if (fchown(fd, getuid(), getgid()) == 0) return failed("fchown of an O_PATH descriptor succeeded");
  if (errno != EBADF) return failed("fchown of an O_PATH descriptor: not EBADF");
  return ok("EBADF");
}

// stop-parent-chmod: success = after trying to stop its parent (the keeper that performs its
// chmods), the command's own chmod still completes. A stopped keeper would leave it blocked:
// the alarm then lets the keeper go on and fails the probe instead of hanging the test.
void continue_parent_and_fail(int) {
  kill(getppid(), SIGCONT);
  static const char message[] = "FAILED chmod hung: the keeper was stopped\n";
  (void)!write(1, message, sizeof message - 1);
  _exit(1);
}
int stop_parent_chmod(const char* path) {
  if (kill(getppid(), SIGSTOP) == 0) printf("SIGSTOP to the parent was accepted\n");
  signal(SIGALRM, continue_parent_and_fail);
  alarm(10);
  return chmod(path, 0750) == 0 ? ok("chmod") : failed("chmod");
}

long raw_int80_getpid() {
  long ret = 20;  // i386 __NR_getpid
  asm volatile("int $0x80" : "+a"(ret) : : "memory");
  return ret;
}

int usage() {
  fprintf(stderr, "usage: sandbox_probe COMMAND [ARGS]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  if (argc < 2) return usage();
  std::string cmd = argv[1];
  auto arg = [&](int i) -> const char* { return i < argc ? argv[i] : ""; };
  bool has = argc >= 3;

  if (cmd == "write" && has) return write_file(arg(2), argc > 3 ? arg(3) : "probe\n", O_CREAT | O_TRUNC);
  if (cmd == "append" && has) return write_file(arg(2), "more\n", O_APPEND);
  if (cmd == "read" && has) return read_file(arg(2));
  if (cmd == "unlink" && has) return unlink(arg(2)) == 0 ? ok("unlink") : failed("unlink");
  if (cmd == "rmdir" && has) return rmdir(arg(2)) == 0 ? ok("rmdir") : failed("rmdir");
  if (cmd == "mkdir" && has) return mkdir(arg(2), 0755) == 0 ? ok("mkdir") : failed("mkdir");
  if (cmd == "rename" && argc > 3) return rename(arg(2), arg(3)) == 0 ? ok("rename") : failed("rename");
  if (cmd == "truncate" && has) return truncate(arg(2), 0) == 0 ? ok("truncate") : failed("truncate");
  if (cmd == "chmod" && has) return chmod(arg(2), 0777) == 0 ? ok("chmod") : failed("chmod");
  if (cmd == "chmod-mode" && argc > 3) return chmod(arg(2), octal(arg(3))) == 0 ? ok("chmod") : failed("chmod");
  if (cmd == "lchmod" && argc > 3) {  // glibc goes through /proc/self/fd for AT_SYMLINK_NOFOLLOW
    return fchmodat(AT_FDCWD, arg(2), octal(arg(3)), AT_SYMLINK_NOFOLLOW) == 0 ? ok("lchmod") : failed("lchmod");
  }
  if (cmd == "fchmod-open" && argc > 3) {  // PATH MODE: open read-only, then fchmod
    int fd = open(arg(2), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return failed("open");
    return fchmod(fd, octal(arg(3))) == 0 ? ok("fchmod") : failed("fchmod");
  }
  if (cmd == "fchmodat-dir" && argc > 4) {  // DIR NAME MODE: relative to a descriptor of DIR
    int dir = open(arg(2), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return failed("open dir");
    return fchmodat(dir, arg(3), octal(arg(4)), 0) == 0 ? ok("fchmodat") : failed("fchmodat");
  }
  if (cmd == "chmod-race" && argc > 4) return chmod_race(arg(2), arg(3), atol(arg(4)));
  if (cmd == "parent-fds") return parent_fds();
  if (cmd == "fchmod-opath" && has) return fchmod_opath(arg(2));
  if (cmd == "stop-parent-chmod" && has) return stop_parent_chmod(arg(2));
  if (cmd == "chown" && has) return chown(arg(2), getuid(), getgid()) == 0 ? ok("chown") : failed("chown");
  if (cmd == "setxattr" && has) {
    return setxattr(arg(2), "user.codexd", "x", 1, 0) == 0 ? ok("setxattr") : failed("setxattr");
  }
  if (cmd == "symlink-write" && argc > 3) {  // TARGET LINK: plant a symlink, write through it
    if (symlink(arg(2), arg(3)) != 0) return failed("symlink");
    return write_file(arg(3), "via symlink\n", O_CREAT | O_TRUNC);
  }
  if (cmd == "hardlink-write" && argc > 3) {  // TARGET LINK
    if (link(arg(2), arg(3)) != 0) return failed("link");
    return write_file(arg(3), "via hardlink\n", O_TRUNC);
  }
  if (cmd == "list" && has) {
    int fd = open(arg(2), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd >= 0 ? ok("list") : failed("list");
  }
  if (cmd == "tcp4" && argc > 3) return inet_exchange(AF_INET, SOCK_STREAM, arg(2), atoi(arg(3)));
  if (cmd == "tcp6" && argc > 3) return inet_exchange(AF_INET6, SOCK_STREAM, arg(2), atoi(arg(3)));
  if (cmd == "udp4" && argc > 3) return inet_exchange(AF_INET, SOCK_DGRAM, arg(2), atoi(arg(3)));
  if (cmd == "dns" && argc > 3) return dns_query(arg(2), atoi(arg(3)));
  if (cmd == "unix-stream" && has) return unix_stream(arg(2), false);
  if (cmd == "abstract" && has) return unix_stream(arg(2), true);
  if (cmd == "unix-dgram" && argc > 3) return unix_dgram(arg(2), arg(3));
  if (cmd == "socketpair-send") {  // must keep working with the network off
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return failed("socketpair");
    if (send(pair[0], "ping", 4, 0) != 4) return failed("send");
    char buf[8];
    if (recv(pair[1], buf, sizeof buf, 0) != 4) return failed("recv");
    return ok("socketpair");
  }
  if (cmd == "kill" && has) return kill(atoi(arg(2)), SIGCONT) == 0 ? ok("kill") : failed("kill");
  if (cmd == "ptrace" && has) {
    pid_t pid = atoi(arg(2));
    if (ptrace(PTRACE_SEIZE, pid, nullptr, nullptr) != 0) return failed("ptrace");
    ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
    return ok("ptrace");
  }
  if (cmd == "ptrace-traceme") return ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) == 0 ? ok("traceme") : failed("traceme");
  if (cmd == "mount" && has) {
    return mount("none", arg(2), "tmpfs", 0, nullptr) == 0 ? ok("mount") : failed("mount");
  }
  if (cmd == "chroot") return chroot("/") == 0 ? ok("chroot") : failed("chroot");
  if (cmd == "unshare-user") return unshare(CLONE_NEWUSER) == 0 ? ok("unshare") : failed("unshare");
  if (cmd == "unshare-mount") return unshare(CLONE_NEWNS) == 0 ? ok("unshare") : failed("unshare");
  if (cmd == "clone-newuser") {
    long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (pid < 0) return failed("clone");
    if (pid == 0) _exit(0);
    waitpid(static_cast<pid_t>(pid), nullptr, 0);
    return ok("clone");
  }
  if (cmd == "clone3") {
    long rc = syscall(SYS_clone3, nullptr, 0);
    printf("clone3 errno %d\n", rc < 0 ? errno : 0);
    return rc < 0 && errno == ENOSYS ? 1 : 0;
  }
  if (cmd == "euid") {
    printf("EUID %d\n", geteuid());
    return geteuid() == 0 ? 0 : 1;
  }
  if (cmd == "caps") {  // success = holds any effective or permitted capability
    unsigned long long eff = 0, prm = 0, bnd = 0;
    if (read_capability_set("CapEff:", &eff) != 0 || read_capability_set("CapPrm:", &prm) != 0 ||
        read_capability_set("CapBnd:", &bnd) != 0) {
      return failed("read status");
    }
    printf("CapEff %llx CapPrm %llx CapBnd %llx\n", eff, prm, bnd);
    return (eff | prm) != 0 ? 0 : 1;
  }
  if (cmd == "setuid-exec" && argc > 3) {  // UID PROGRAM [ARGS]: become UID, then exec PROGRAM
    int uid = atoi(arg(2));
    if (setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0) return failed("setresuid");
    execv(argv[3], argv + 3);
    return failed("exec");
  }
  if (cmd == "shm-attach" && has) {  // attach System V shared memory segment ID (then detach)
    void* at = shmat(atoi(arg(2)), nullptr, SHM_RDONLY);
    if (at == reinterpret_cast<void*>(-1)) return failed("shmat");
    shmdt(at);
    return ok("shmat");
  }
  if (cmd == "shm-create") {  // a private System V segment of one page, removed again
    int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    if (id < 0) return failed("shmget");
    shmctl(id, IPC_RMID, nullptr);
    return ok("shmget");
  }
  if (cmd == "sethostname") {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    return sethostname(name, strlen(name)) == 0 ? ok("sethostname") : failed("sethostname");
  }
  if (cmd == "rewrite" && has) {  // write a file's current content back (no net change)
    char buf[4096] = {};
    int fd = open(arg(2), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return failed("open for read");
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return failed("read");
    fd = open(arg(2), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return failed("open for write");
    ssize_t w = write(fd, buf, static_cast<size_t>(n));
    int err = errno;
    close(fd);
    errno = err;
    return w == n ? ok("rewrite") : failed("write");
  }
  if (cmd == "x32-getpid") {
    long rc = syscall(0x40000000L | SYS_getpid);
    printf("x32 getpid returned %ld errno %d\n", rc, rc < 0 ? errno : 0);
    return rc > 0 ? 0 : 1;
  }
  if (cmd == "int80-getpid") {
    long rc = raw_int80_getpid();
    printf("int80 getpid returned %ld\n", rc);
    return rc > 0 ? 0 : 1;
  }
  if (cmd == "personality") {
    if (personality(0xffffffff) < 0) return failed("personality query");
    return personality(ADDR_NO_RANDOMIZE) >= 0 ? ok("personality") : failed("personality");
  }
  if (cmd == "io_uring") return syscall(SYS_io_uring_setup, 1, calloc(1, 120)) >= 0 ? ok("io_uring") : failed("io_uring");
  if (cmd == "bpf") {
    // BPF_PROG_LOAD with no program: EINVAL means the call itself was allowed.
    long rc = syscall(SYS_bpf, 5, calloc(1, 128), 128);
    return (rc >= 0 || errno != EPERM) ? ok("bpf reached the kernel") : failed("bpf");
  }
  if (cmd == "keyctl") {
    long rc = syscall(SYS_keyctl, 0 /*KEYCTL_GET_KEYRING_ID*/, -4 /*user keyring*/, 0);
    return (rc >= 0 || errno != EPERM) ? ok("keyctl reached the kernel") : failed("keyctl");
  }
  if (cmd == "perf") {
    long rc = syscall(SYS_perf_event_open, calloc(1, 128), 0, -1, -1, 0);
    return (rc >= 0 || errno != EPERM) ? ok("perf reached the kernel") : failed("perf");
  }
  if (cmd == "tiocsti") {
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return failed("openpt");
    int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
    if (slave < 0) return failed("open slave");
    char c = 'x';
    return ioctl(slave, TIOCSTI, &c) == 0 ? ok("tiocsti") : failed("tiocsti");
  }
  if (cmd == "proxy-ping") return proxy_ping();
  if (cmd == "netlink-links") return netlink_links();
  if (cmd == "tcp4-listen" && has) return tcp4_listen(atoi(arg(2)));
  if (cmd == "fd-open" && has) return fcntl(atoi(arg(2)), F_GETFD) >= 0 ? ok("fd open") : failed("fd open");
  if (cmd == "env" && has) {
    const char* value = getenv(arg(2));
    printf("ENV %s=%s\n", arg(2), value ? value : "(unset)");
    return value ? 0 : 1;
  }
  if (cmd == "pid") {
    printf("PID %d\n", getpid());
    return 0;
  }
  if (cmd == "block") {  // stays alive until stdin closes (a victim for signal/ptrace tests)
    char c;
    while (read(0, &c, 1) > 0) {
    }
    return 0;
  }
  if (cmd == "unfiltered-process") {  // success = some visible process has no seccomp filter
    DIR* proc = opendir("/proc");
    if (proc == nullptr) return failed("opendir /proc");
    while (dirent* entry = readdir(proc)) {
      if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
      std::string status = std::string("/proc/") + entry->d_name + "/status";
      FILE* f = fopen(status.c_str(), "re");
      if (f == nullptr) continue;
      char line[256];
      while (fgets(line, sizeof line, f) != nullptr) {
        if (strncmp(line, "Seccomp:", 8) == 0 && atoi(line + 8) == 0) {
          printf("UNFILTERED pid %s\n", entry->d_name);
          fclose(f);
          closedir(proc);
          return 0;
        }
      }
      fclose(f);
    }
    closedir(proc);
    errno = ESRCH;
    return failed("every visible process is filtered");
  }
  if (cmd == "fd-write" && has) {  // write through an inherited descriptor number
    int fd = atoi(arg(2));
    return write(fd, "leak\n", 5) == 5 ? ok("fd-write") : failed("fd-write");
  }
  if (cmd == "true") return 0;
  return usage();
}
