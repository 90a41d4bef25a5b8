#include "tests/integration/process_probe.h"

#include <map>
#include <set>

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <grpcpp/create_channel_posix.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace codexd::testing {
namespace {

// /proc/<pid>/stat: "pid (comm) S ppid ..."; comm may contain spaces and parentheses.
bool parse_stat(const std::string& stat, char* state, pid_t* ppid) {
  auto close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  std::istringstream rest(stat.substr(close + 2));
  long parent = 0;
  rest >> *state >> parent;
  *ppid = static_cast<pid_t>(parent);
  return static_cast<bool>(rest);
}

void close_fds_from(int first) { ::syscall(SYS_close_range, static_cast<unsigned>(first), ~0U, 0U); }

// One byte with room for one descriptor (SCM_RIGHTS). Allocates nothing, so the forked child
// may use it too.
struct FdMessage {
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  FdMessage() {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  FdMessage(const FdMessage&) = delete;
  FdMessage& operator=(const FdMessage&) = delete;
};

}  // namespace

char process_state(pid_t pid) {
  std::string stat = read_text_file("/proc/" + std::to_string(pid) + "/stat");
  char state = 0;
  pid_t ppid = 0;
  if (stat.empty() || !parse_stat(stat, &state, &ppid)) return 0;
  return state;
}

bool process_running(pid_t pid) {
  char s = process_state(pid);
  return s != 0 && s != 'Z' && s != 'X';
}

std::vector<ChildProcess> children_of(pid_t parent) {
  std::vector<ChildProcess> out;
  DIR* dir = ::opendir("/proc");
  if (!dir) return out;
  while (auto* entry = ::readdir(dir)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    std::string stat = read_text_file(std::string("/proc/") + entry->d_name + "/stat");
    char state = 0;
    pid_t ppid = 0;
    if (parse_stat(stat, &state, &ppid) && ppid == parent) out.push_back({static_cast<pid_t>(pid), state});
  }
  ::closedir(dir);
  return out;
}

uint64_t resident_bytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

size_t open_fd_count(pid_t pid) {
  size_t n = 0;
  DIR* dir = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (!dir) return 0;
  while (auto* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++n;
  }
  ::closedir(dir);
  return n;
}

size_t connection_fd_count(pid_t pid, const std::string& socket_path) {
  std::set<std::string> on_path;  // socket inodes bound to the path
  std::ifstream table("/proc/net/unix");
  std::string line;
  std::getline(table, line);  // the header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string num, refs, protocol, flags, type, state, inode, path;
    if (fields >> num >> refs >> protocol >> flags >> type >> state >> inode >> path && path == socket_path) {
      on_path.insert("socket:[" + inode + "]");
    }
  }
  size_t n = 0;
  const std::string base = "/proc/" + std::to_string(pid) + "/fd";
  DIR* dir = ::opendir(base.c_str());
  if (!dir) return 0;
  while (auto* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    char target[128];
    const ssize_t len = ::readlink((base + "/" + entry->d_name).c_str(), target, sizeof target - 1);
    if (len > 0 && on_path.count(std::string(target, static_cast<size_t>(len)))) ++n;
  }
  ::closedir(dir);
  return n;
}

std::map<std::string, size_t> open_fd_kinds(pid_t pid) {
  std::map<std::string, size_t> kinds;
  const std::string base = "/proc/" + std::to_string(pid) + "/fd";
  DIR* dir = ::opendir(base.c_str());
  if (!dir) return kinds;
  while (auto* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    char target[512];
    ssize_t n = ::readlink((base + "/" + entry->d_name).c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    std::string what(target, static_cast<size_t>(n));
    // "socket:[123]" -> "socket", "anon_inode:[eventfd]" -> "anon_inode:[eventfd]",
    // a file of a cgroup hierarchy -> "cgroup file", another path -> "file"
    if (what.rfind("socket:", 0) == 0) what = "socket";
    else if (what.rfind("pipe:", 0) == 0) what = "pipe";
    else if (what.rfind("/sys/fs/cgroup/", 0) == 0) what = "cgroup file";
    else if (what[0] == '/') what = "file";
    ++kinds[what];
  }
  ::closedir(dir);
  return kinds;
}

bool wait_process_exit(pid_t pid, std::chrono::milliseconds guard) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH;  // already reaped
  pollfd p{fd, POLLIN, 0};
  int n;
  do {
    n = ::poll(&p, 1, static_cast<int>(guard.count()));
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  return n == 1;
}

bool eventually(const std::function<bool()>& done, int tries) {
  for (int i = 0; i < tries; ++i) {
    if (done()) return true;
    ::usleep(100'000);
  }
  return done();
}

Fifo::Fifo(const std::string& dir, const std::string& name) : path_(dir + "/" + name) {
  ::mkfifo(path_.c_str(), 0666);
  ::chmod(path_.c_str(), 0666);
}

Fifo::~Fifo() { ::unlink(path_.c_str()); }

void Fifo::write(const std::string& data) const {
  int fd = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  ::close(fd);
}

std::string Fifo::read_all() const {
  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

std::optional<long> find_number(const std::string& text, const std::string& key) {
  auto at = text.find(key);
  if (at == std::string::npos) return std::nullopt;
  const char* begin = text.c_str() + at + key.size();
  char* end = nullptr;
  long value = std::strtol(begin, &end, 10);
  if (end == begin) return std::nullopt;
  return value;
}

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    close_fds_from(3);
    ::execv(args[0], args.data());
    _exit(127);
  }
}

BackgroundProcess::~BackgroundProcess() {
  if (pid_ > 0) kill_and_reap();
}

int BackgroundProcess::kill_and_reap() {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

int connect_unix(const std::string& socket_path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool closed_by_daemon(int fd, std::chrono::milliseconds guard) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(guard.count())) <= 0) return false;
  char buf[256];
  return ::recv(fd, buf, sizeof buf, MSG_DONTWAIT) <= 0;
}

ChannelAsUid::ChannelAsUid(const std::string& socket_path, uid_t uid) {
  int pair[2], release[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return;
  if (::pipe2(release, O_CLOEXEC) != 0) return;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof addr.sun_path - 1);
  holder_ = ::fork();
  if (holder_ == 0) {
    // Only async-signal-safe calls here (the parent has threads).
    ::dup2(pair[1], 100);
    ::dup2(release[0], 101);
    ::syscall(SYS_close_range, 3U, 99U, 0U);
    close_fds_from(102);
    ::setgroups(0, nullptr);
    if (::setgid(uid) != 0 || ::setuid(uid) != 0) _exit(126);
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) _exit(125);
    FdMessage out;
    out.byte = 'x';
    cmsghdr* cmsg = CMSG_FIRSTHDR(&out.msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cmsg), &fd, sizeof fd);
    if (::sendmsg(100, &out.msg, 0) != 1) _exit(124);
    char c;
    while (::read(101, &c, 1) > 0) {
    }
    _exit(0);
  }
  ::close(pair[1]);
  ::close(release[0]);
  release_fd_ = release[1];
  FdMessage in;
  ssize_t n = ::recvmsg(pair[0], &in.msg, MSG_CMSG_CLOEXEC);
  ::close(pair[0]);
  cmsghdr* cmsg = n == 1 ? CMSG_FIRSTHDR(&in.msg) : nullptr;
  if (!cmsg || cmsg->cmsg_type != SCM_RIGHTS) return;
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(cmsg), sizeof fd);
  channel_ = grpc::CreateInsecureChannelFromFd("uid-" + std::to_string(uid), fd);
}

ChannelAsUid::~ChannelAsUid() {
  channel_.reset();
  if (release_fd_ >= 0) ::close(release_fd_);
  if (holder_ > 0) {
    int status = 0;
    ::waitpid(holder_, &status, 0);
  }
}

}  // namespace codexd::testing
